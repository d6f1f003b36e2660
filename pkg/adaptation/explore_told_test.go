package adaptation

// What the exploration checks a successor is told (issue 39): its first
// round against what SyncFn showed, who may have an update applied, and
// the reply a plugin that did not opt in gets to UpdateContainers.
//
// The explorer's runtime keeps every version of its containers: a round is
// exact if each container in it is as the runtime had it at some moment
// between the instance's registration and the round (the end of the
// operation in flight then included: the runtime applies a reply's updates
// once the event returns), unless an event about the container reached the
// instance after the round, or a later round told it again.

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
)

// rtValue is a container as the runtime had it from version ver on.
type rtValue struct {
	ver int
	val string
}

// firstRound is an instance's first full round and what it was told after.
type firstRound struct {
	seq      int // when it arrived, among relays and rounds
	lo, hi   int // the runtime's versions at the instance's registration and at the round
	inFlight []int
	open     bool // more messages of the round to come
	ctrs     map[string]string
	later    map[string]bool // containers a later round told
}

type relayRec struct {
	seq     int
	who, id string
}

// ctrValue is what the check compares of a container: its state and CPUs.
func ctrValue(c *api.Container) string {
	if c == nil {
		return "absent"
	}
	return c.GetState().String() + " cpus=" + strconv.Quote(c.GetLinux().GetResources().GetCpu().GetCpus())
}

// markerOf tells which instance's update u is: its CPUs are its
// generation (marked).
func markerOf(u *api.ContainerUpdate) string {
	switch u.GetLinux().GetResources().GetCpu().GetCpus() {
	case "1":
		return "a"
	case "2":
		return "b"
	case "3":
		return "c"
	}
	return ""
}

func marked(id string, gen uint64) *api.ContainerUpdate {
	return &api.ContainerUpdate{ContainerId: id, Linux: &api.LinuxContainerUpdate{
		Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: strconv.FormatUint(gen, 10)}}}}
}

// setCtrs changes the runtime's containers, recording each version.
func (e *explorer) setCtrs(change func([]*api.Container) []*api.Container) {
	rt := e.rt
	rt.mu.Lock()
	defer rt.mu.Unlock()
	old := rt.containers
	next := make([]*api.Container, 0, len(old)+1)
	for _, c := range old {
		next = append(next, proto.Clone(c).(*api.Container))
	}
	next = change(next)
	rt.containers = next
	was, is := map[string]string{}, map[string]string{}
	for _, c := range old {
		was[c.GetId()] = ctrValue(c)
	}
	for _, c := range next {
		is[c.GetId()] = ctrValue(c)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rtVer++
	for id, v := range is {
		if was[id] != v {
			e.hist[id] = append(e.hist[id], rtValue{e.rtVer, v})
		}
	}
	for id := range was {
		if _, ok := is[id]; !ok {
			e.hist[id] = append(e.hist[id], rtValue{e.rtVer, "absent"})
		}
	}
}

// applyUpdates applies updates as the runtime does and returns those that
// failed: a container it does not have, or has stopped, and "fail".
func (e *explorer) applyUpdates(updates []*api.ContainerUpdate) []*api.ContainerUpdate {
	var failed []*api.ContainerUpdate
	e.setCtrs(func(ctrs []*api.Container) []*api.Container {
		for _, u := range updates {
			i := slices.IndexFunc(ctrs, func(c *api.Container) bool { return c.GetId() == u.GetContainerId() })
			if i < 0 || ctrs[i].GetState() == api.ContainerState_CONTAINER_STOPPED {
				if !u.GetIgnoreFailure() {
					failed = append(failed, u)
				}
				continue
			}
			adjust.MergeResources(ctrs[i], u.GetLinux().GetResources())
		}
		return ctrs
	})
	return failed
}

// beginOp and endOp bracket a runtime operation that changes its state.
func (e *explorer) beginOp() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opSeq++
	e.ops[e.opSeq] = -1
	return e.opSeq
}

func (e *explorer) endOp(id int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ops[id] = e.rtVer
}

// registering records the runtime's version when who registers, and the
// containers with an UpdateFn call in flight then: the runtime may have
// applied it and the ledger not noted it yet (the one window left:
// hack/model/ledger.pml's S1 excuses such a container).
func (e *explorer) registering(who string) {
	inFlight := e.r.ledger.Stats().Updating
	e.mu.Lock()
	defer e.mu.Unlock()
	e.regVer[who] = e.rtVer
	e.updatingAtReg[who] = inFlight
}

// round records a Synchronize message to who.
func (e *explorer) round(who string, req *api.SynchronizeRequest) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	fr := e.rounds[who]
	if fr == nil && req.GetDelta() {
		return // a delta round first: a reactivation, not a join
	}
	if fr == nil {
		fr = &firstRound{seq: e.seq, lo: e.regVer[who], hi: e.rtVer, ctrs: map[string]string{}, later: map[string]bool{}, open: true}
		for id, end := range e.ops {
			if end < 0 {
				fr.inFlight = append(fr.inFlight, id)
			}
		}
		e.rounds[who] = fr
	}
	if fr.open {
		for _, c := range req.GetContainers() {
			fr.ctrs[c.GetId()] = ctrValue(c)
		}
		fr.open = req.GetMore()
		return
	}
	for _, c := range req.GetContainers() {
		fr.later[c.GetId()] = true
	}
	for _, id := range req.GetRemovedContainers() {
		fr.later[id] = true
	}
}

// removal records that the runtime relays the removal of container id.
func (e *explorer) removal(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	e.removing[id] = e.seq
}

// relay records an event about container id relayed to who.
func (e *explorer) relay(who, id string) {
	e.sampleActive()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	e.relays = append(e.relays, relayRec{e.seq, who, id})
}

// checkRounds: each instance's first full round told every container as
// SyncFn showed it at some moment between the instance's registration and
// the round's end, modulo the containers it was told of again after it.
func (e *explorer) checkRounds() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var fails []string
	whos := make([]string, 0, len(e.rounds))
	for who := range e.rounds {
		whos = append(whos, who)
	}
	sort.Strings(whos)
	for _, who := range whos {
		fr := e.rounds[who]
		hi := fr.hi
		for _, id := range fr.inFlight {
			end := e.ops[id]
			if end < 0 {
				end = e.rtVer
			}
			hi = max(hi, end)
		}
		ids := map[string]bool{}
		for id := range fr.ctrs {
			ids[id] = true
		}
		for id := range e.hist {
			ids[id] = true
		}
		for id := range ids {
			if fr.later[id] || slices.Contains(e.updatingAtReg[who], id) || slices.ContainsFunc(e.relays, func(x relayRec) bool { return x.seq > fr.seq && x.who == who && x.id == id }) {
				continue
			}
			told, ok := fr.ctrs[id]
			if !ok {
				told = "absent"
			}
			valid := []string{"absent"}
			for _, v := range e.hist[id] {
				switch {
				case v.ver <= fr.lo:
					valid = []string{v.val}
				case v.ver <= hi:
					valid = append(valid, v.val)
				}
			}
			if s, ok := e.removing[id]; ok && s < fr.seq {
				// Its removal was relayed: a store that lags behind
				// (CRI-O) still lists it, the ledger never brings it back.
				valid = append(valid, "absent")
			}
			if !slices.Contains(valid, told) {
				fails = append(fails, fmt.Sprintf("%s's first round told %s %s; SyncFn showed %q from its registration to its round", who, id, told, valid))
			}
		}
	}
	return fails
}

// sendRec is an update request an instance sent (UpdateContainers, or a
// Synchronize reply asking for updates): when, and whether it was active.
type sendRec struct {
	seq    int
	active bool
}

func (e *explorer) sending(who string) {
	e.sampleActive()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	e.sent[who] = append(e.sent[who], sendRec{e.seq, e.lastActive[who] == e.seq-1})
}

// sampleActive records that the instances active now were active at this
// point of the run (called at every schedule point, relay and send).
func (e *explorer) sampleActive() {
	ids := activeInstances(e.r, "10-p")
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	for _, who := range ids {
		e.lastActive[who] = e.seq
	}
}

// inFlightAcross tells whether who was active when or after it sent an
// update: its call may have passed the adaptation's check while who was
// active and reach UpdateFn after a switch away from it (the switch cannot
// wait for an UpdateFn call, which takes the runtime's mutex: the one
// window left, hack/model/ledger.pml). A Synchronize reply's updates are
// checked once the instance is active, so "after".
func (e *explorer) inFlightAcross(who string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.ContainsFunc(e.sent[who], func(s sendRec) bool { return s.active || e.lastActive[who] > s.seq })
}

// mayApply: an update reaches UpdateFn or a reply only from the active
// instance of its name. Excused: a call in flight across a switch that
// still holds the dispatch or that nothing was relayed after
// (inFlightAcross), and a crashed instance's call, in flight as its
// connection closes.
func (e *explorer) mayApply(updates []*api.ContainerUpdate, where string) {
	for _, u := range updates {
		who := markerOf(u)
		if who == "" {
			continue
		}
		e.mu.Lock()
		f := e.fakes[who]
		e.mu.Unlock()
		if f == nil {
			continue
		}
		f.mu.Lock()
		crashed := f.crashed
		f.mu.Unlock()
		if crashed || slices.Contains(activeInstances(e.r, "10-p"), who) {
			continue
		}
		h := &e.r.hold
		h.mu.Lock()
		holding := h.holding
		h.mu.Unlock()
		if !holding && !e.inFlightAcross(who) {
			e.violate("an update of %s from %s reached %s, which is not active (active: %q), through %s", u.GetContainerId(), who, where, activeInstances(e.r, "10-p"), callers())
		}
	}
}

// explorePods places each registering instance in its pod (wg): the fakes
// are all this process, in one cgroup, so the pod is that of the instance
// whose registration runs on the calling goroutine (registersOn).
type explorePods struct{ e *explorer }

func (x explorePods) Place(string, []*api.PodSandbox, []*api.Container) (PeerPlace, *PeerPod) {
	x.e.mu.Lock()
	who := x.e.placing[goid()]
	x.e.mu.Unlock()
	tg := map[string]int64{"a": 1, "b": 2, "c": 3}[who]
	if tg == 0 {
		return PeerOutsidePod, nil
	}
	name := "p-h" + who
	return PeerInPod, &PeerPod{Namespace: "kube-system", Name: name, UID: "uid-" + name, ContainerID: "c-" + name,
		TemplateGeneration: tg, HasTemplateGeneration: true, Handover: HandoverWorkload,
		// Each generation a chart upgrade: the chart stamps its version.
		Labels: map[string]string{"app": "p", "pod-template-generation": strconv.FormatInt(tg, 10), "controller-revision-hash": "h" + who,
			"helm.sh/chart": "p-v0.1" + strconv.FormatInt(tg, 10) + ".0", "app.kubernetes.io/version": "v0.1" + strconv.FormatInt(tg, 10) + ".0"}}
}

func (explorePods) Workload(pod *PeerPod) string { return KubernetesResolver{}.Workload(pod) }

func (e *explorer) registersOn(who string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.placing[goid()] = who
}

// goid is the calling goroutine's id, from its stack's header.
func goid() int64 {
	var buf [64]byte
	s := strings.TrimPrefix(string(buf[:runtime.Stack(buf[:], false)]), "goroutine ")
	id, _ := strconv.ParseInt(s[:strings.IndexByte(s, ' ')], 10, 64)
	return id
}

// callers names the adaptation's functions on the calling goroutine's
// stack, innermost first: which path an update took.
func callers() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var names []string
	for {
		f, more := frames.Next()
		if i := strings.Index(f.Function, "adaptation.(*"); i >= 0 && !strings.Contains(f.File, "_test.go") {
			names = append(names, f.Function[i+len("adaptation."):])
		}
		if !more {
			break
		}
	}
	return strings.Join(names, " < ")
}
