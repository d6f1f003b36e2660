package annotator

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
)

// HandledBy is the annotation the plugin stamps on containers. Its value
// names the instance that handled the creation ("version/instance"), so a
// successor can tell what its predecessors already did.
const HandledBy = "annotator.nri-handover.io/handled-by"

// HandledByEnv is the environment variable the plugin stamps instead, with
// -stamp=env: for runtimes that apply no annotation adjustment. Docker
// Engine (moby v2) refuses every adjustment but environment variables and
// mounts, and fails the container's creation otherwise; it hands the
// container's environment, NRI's additions included, back in
// Synchronize, so the stamp survives to a successor's round there too.
const HandledByEnv = "ANNOTATOR_HANDLED_BY"

// StampKind says where the plugin stamps a container.
type StampKind int

const (
	// StampAnnotation stamps the annotation HandledBy (the default).
	StampAnnotation StampKind = iota
	// StampEnv stamps the environment variable HandledByEnv.
	StampEnv
)

// Plugin is the annotator's event handling. The runtime sends it events only
// while it is the active instance of its name; the state file (if any) is
// written only then as well, so two instances never write it at once.
type Plugin struct {
	log *slog.Logger
	// Set once stub.New resolved the identity (flags or environment), before
	// Run; constant afterwards.
	stamp      string
	stampKind  StampKind
	leave      bool // -leave-stamped: without handover, leave a container another instance stamped
	generation uint64
	handover   func() bool // whether the runtime offered handover (Stub.HandoverAvailable)

	mu     sync.Mutex
	inv    inventory
	state  *stateFile // nil without -state-file
	active bool       // this instance owns the state file
	taken  handoff    // how it last came to own it
}

func newPlugin(log *slog.Logger, state *stateFile) *Plugin {
	return &Plugin{log: log, state: state, inv: inventory{}, handover: func() bool { return true }}
}

// identify records who this instance is, as the stub registers it.
func (p *Plugin) identify(s stub.HandoverStub) {
	p.stamp = s.PluginVersion() + "/" + s.InstanceID()
	p.generation = s.Generation()
	p.handover = s.HandoverAvailable
}

// SynchronizeRound is delta-aware. A full round (the first of a connection)
// rebuilds the inventory; a delta round (a catch-up during a takeover, or
// what changed while a reactivated standby stood by) applies only what
// changed since the previous round. Either
// way a container that an instance of this plugin already stamped needs no
// work: on a takeover those are the predecessor's, and they are skipped. A
// container nobody stamped was created while no annotator was active; the
// annotator cannot annotate a running container, so it only records it as
// unhandled (a plugin with real per-container work, say CPU pinning, would
// answer with a ContainerUpdate for exactly these).
func (p *Plugin) SynchronizeRound(_ context.Context, info *stub.SyncInfo, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()

	sum := p.inv.apply(p.stamp, info, ctrs)
	// skipped: stamped by another instance (a predecessor), nothing to do.
	attrs := []any{"containers", len(ctrs), "mine", sum.mine, "skipped", sum.others, "unstamped", sum.unstamped}
	switch {
	case info != nil && info.Takeover != nil && info.Takeover.GetReactivation():
		p.log.Info("reactivated", append(attrs, "delta", info.Delta, "removed", sum.removed)...)
	case info != nil && info.Delta:
		p.log.Info("catch-up round", append(attrs, "removed", sum.removed)...)
	case info != nil && info.Takeover != nil:
		attrs = append(attrs, "from", info.Takeover.GetPredecessorVersion()+"/"+info.Takeover.GetPredecessorInstance())
		if pod := info.Takeover.GetPredecessorPod(); pod != nil {
			// The runtime's word, from the predecessor's connection.
			attrs = append(attrs, "from-pod", pod.GetNamespace()+"/"+pod.GetName())
		}
		p.log.Info("taking over", attrs...)
	default:
		p.log.Info("synchronized", append(attrs, "pods", len(pods))...)
	}

	// A runtime without handover sends no roles: synchronized is active.
	if !p.handover() && !p.active {
		p.acquireLocked("")
	}
	p.persistLocked()
	return nil, nil
}

// CreateContainer stamps the new container with this instance, and says so
// in the log: which instance handled which container is what an operator
// asks after a rollout (and what the real-containerd test checks).
//
// On a runtime without handover (upstream NRI) two instances of the plugin
// that are connected at once, during a surge or after the runtime was
// restarted onto upstream in the middle of one, both get every creation, in
// turn, and upstream refuses the container if both set the annotation
// ("plugins ... both tried to set"). With -leave-stamped the instance that
// comes second sees the first one's stamp and leaves the container to it
// (the rubber-stamp pattern of docs/zero-downtime-on-upstream.md); off by
// default, so that the demo shows what upstream NRI does to a plugin that
// does not guard against its second instance.
func (p *Plugin) CreateContainer(_ context.Context, pod *api.PodSandbox, c *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	if by := stampOf(c); p.leave && by != "" && by != p.stamp && !p.handover() {
		p.log.Info("left container to another instance", "pod", pod.GetName(), "namespace", pod.GetNamespace(), "container", c.GetName(),
			"id", c.GetId(), "stamped-by", by)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.inv[c.GetId()] = by
		p.persistLocked()
		return nil, nil, nil
	}
	adj := &api.ContainerAdjustment{}
	if p.stampKind == StampEnv {
		adj.AddEnv(HandledByEnv, p.stamp)
	} else {
		adj.AddAnnotation(HandledBy, p.stamp)
	}
	p.log.Info("stamped container", "pod", pod.GetName(), "namespace", pod.GetNamespace(), "container", c.GetName(),
		"id", c.GetId(), "stamp", p.stamp)

	p.mu.Lock()
	defer p.mu.Unlock()
	p.inv[c.GetId()] = p.stamp
	p.persistLocked()
	return adj, nil, nil
}

// RemoveContainer forgets the container.
func (p *Plugin) RemoveContainer(_ context.Context, _ *api.PodSandbox, c *api.Container) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.inv, c.GetId())
	p.persistLocked()
	return nil
}

// RoleChange takes the state file over when the runtime makes this instance
// active and lets go of it when a successor took over but keeps this one as
// a standby. The runtime tells the old instance before the new one, so the
// old one's last write precedes the new one's first.
func (p *Plugin) RoleChange(_ context.Context, req *api.RoleChangeRequest) error {
	peer := peerName(req.GetPeerVersion(), req.GetPeerInstance())
	p.mu.Lock()
	defer p.mu.Unlock()
	switch req.GetRole() {
	case api.PluginRole_PLUGIN_ROLE_ACTIVE:
		p.acquireLocked(peer)
	case api.PluginRole_PLUGIN_ROLE_STANDBY:
		p.releaseLocked("standby: " + peer + " took over")
	}
	return nil
}

// ShutdownWithReason lets go of the state file whatever the reason: no event
// will reach this connection any more. A superseded instance hears it before
// its successor is made active.
func (p *Plugin) ShutdownWithReason(_ context.Context, req *api.ShutdownRequest) {
	why := req.GetReason().String()
	if req.GetReason() == api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED {
		why = "superseded by " + peerName(req.GetSuccessorVersion(), req.GetSuccessorInstance())
	}
	p.release(why)
}

// release lets go of the state file, for instance before the plugin stops on
// SIGTERM while still active: the release is written before the connection
// closes, hence before a successor can be made active.
func (p *Plugin) release(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releaseLocked(why)
}

// acquireLocked makes this instance the owner of the state file and reports
// how it got it. Called with p.mu held.
func (p *Plugin) acquireLocked(peer string) handoff {
	p.active = true
	if p.state == nil {
		return handoff{}
	}
	h, err := p.state.acquire(p.stamp, p.generation, p.inv)
	p.taken = h
	if err != nil {
		p.log.Error("taking over the state file", "file", p.state.path, "error", err)
		return h
	}
	p.log.Info("owns the state file", "file", p.state.path, "epoch", h.epoch, "hand-off", h.String(), "predecessor", peer)
	return h
}

// releaseLocked writes the final state with the release mark; nothing is
// written after it. Called with p.mu held.
func (p *Plugin) releaseLocked(why string) {
	if !p.active {
		return
	}
	p.active = false
	if p.state == nil {
		return
	}
	if err := p.state.release(p.inv); err != nil {
		p.log.Error("releasing the state file", "file", p.state.path, "error", err)
		return
	}
	p.log.Info("released the state file", "file", p.state.path, "why", why)
}

// persistLocked writes the inventory while this instance owns the file.
// A failed write is logged, never turned into a failed container creation:
// the file is bookkeeping, and the next successful write repairs it.
func (p *Plugin) persistLocked() {
	if !p.active || p.state == nil {
		return
	}
	if err := p.state.update(p.inv); err != nil {
		p.log.Error("writing the state file", "file", p.state.path, "error", err)
	}
}

func peerName(version, instance string) string {
	if version == "" && instance == "" {
		return ""
	}
	return version + "/" + instance
}

// inventory maps each container the plugin knows to the instance that
// stamped it ("" for none).
type inventory map[string]string

// roundSummary counts what a synchronization round found.
type roundSummary struct {
	mine, others, unstamped, removed int
}

// apply brings the inventory up to date with a round: a full round replaces
// it, a delta round changes only the listed containers.
func (inv inventory) apply(self string, info *stub.SyncInfo, ctrs []*api.Container) roundSummary {
	var sum roundSummary
	if info == nil || !info.Delta {
		clear(inv)
	} else {
		for _, id := range info.RemovedContainers {
			if _, ok := inv[id]; ok {
				delete(inv, id)
				sum.removed++
			}
		}
	}
	for _, c := range ctrs {
		stamp := stampOf(c)
		switch stamp {
		case self:
			sum.mine++
		case "":
			sum.unstamped++
		default:
			sum.others++ // a predecessor's: nothing left to do
		}
		inv[c.GetId()] = stamp
	}
	return sum
}

// stampOf reads a container's stamp, from the annotation or, where the
// runtime could not take one (-stamp=env), from the environment; whichever
// way this instance stamps, a predecessor may have stamped the other way.
func stampOf(c *api.Container) string {
	if s := c.GetAnnotations()[HandledBy]; s != "" {
		return s
	}
	for _, kv := range c.GetEnv() {
		if v, ok := strings.CutPrefix(kv, HandledByEnv+"="); ok {
			return v
		}
	}
	return ""
}
