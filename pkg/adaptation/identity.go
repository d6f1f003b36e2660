package adaptation

// Peer identity: which container, and so which pod, a plugin's process runs
// in, decided from the runtime's own records instead of from what the plugin
// declares. The peer's cgroup is read once, when it connects (race-free,
// peercgroup_linux.go); it is matched against the pods and containers the
// runtime reports through SyncFn when the plugin registers (resolveIdentities),
// and the result stays with the plugin: a process does not change pods. The
// admission rules (decide) then compare the verified identities
// (SupersedeSameWorkload) and take precedence from the pod's
// pod-template-generation (precedence) rather than from the plugin's word.
// What of this is Kubernetes' (cgroup layouts, labels, the generation) is
// the WorkloadResolver's (resolver.go).

import (
	"context"
	"errors"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/nri-handover/nri/api"
)

// PeerPlace is where a peer runs, as far as the runtime can tell.
type PeerPlace int

const (
	// PeerUnknown: no cgroup could be read (the peer exited before it was
	// verified), or it is a container of a pod the runtime runs that the
	// runtime does not list (yet): the peer is placed nowhere rather than
	// guessed. An opted-in plugin that is unknown is refused at
	// registration; the kubelet restarts it, and by then its container is
	// listed (containerd lists a container from its CreateContainer on,
	// before its process can run).
	PeerUnknown PeerPlace = iota
	// PeerOutsidePod: a process outside any pod (systemd, by hand).
	PeerOutsidePod
	// PeerInPod: a container the runtime knows, in a known pod.
	PeerInPod
)

// PeerPod is the pod a peer runs in.
type PeerPod struct {
	Namespace, Name, UID, ContainerID string
	TemplateGeneration                int64 // pod-template-generation label, 0 if none
	HasTemplateGeneration             bool  // the label is set (and a number)
	Labels                            map[string]string
	// Handover is the pod's HandoverAnnotation, "" if it has none: how its
	// DaemonSet opted plugins written for upstream into handover (groupKey).
	Handover string
}

// parseProcCgroup returns the cgroup path of a /proc/<pid>/cgroup file:
// the unified ("0::") line on cgroup v2 or hybrid, else the first v1
// controller line with a path other than the root.
func parseProcCgroup(data string) (string, error) {
	var v1 string
	for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return "", errors.New("malformed cgroup line " + strconv.Quote(line))
		}
		if parts[0] == "0" && parts[1] == "" && parts[2] != "/" {
			return parts[2], nil
		}
		if v1 == "" && parts[1] != "" && parts[2] != "/" {
			v1 = parts[2]
		}
	}
	if v1 == "" {
		return "/", nil
	}
	return v1, nil
}

// containerCgroup is the full cgroup path the runtime had created for a
// container, from its Linux.CgroupsPath in either driver's form, as the
// runtime sees it (relative to its own cgroup namespace, like the peer's
// /proc/<pid>/cgroup it reads): cgroupfs "/kubepods/besteffort/pod<uid>/<id>"
// is that path; systemd "slice:prefix:name" is the slice's nested path
// (expandSlice) with the unit "prefix-name.scope" (or the slice "name" when
// it names one) below it, as runc creates it. ok is false when the path
// cannot be told: a relative cgroupfs path is relative to a cgroup of the
// runtime's choosing, and the root is no container's.
func containerCgroup(cgroupsPath string) (string, bool) {
	if parts := strings.Split(cgroupsPath, ":"); len(parts) == 3 && !strings.Contains(cgroupsPath, "/") {
		slice, prefix, name := parts[0], parts[1], parts[2]
		if slice == "" {
			slice = "system.slice" // runc's default parent
		}
		dir, ok := expandSlice(slice)
		if !ok || name == "" {
			return "", false
		}
		unit := name
		switch {
		case strings.HasSuffix(name, ".slice"):
		case prefix == "":
			unit = name + ".scope"
		default:
			unit = prefix + "-" + name + ".scope"
		}
		return path.Join(dir, unit), true
	}
	return absCgroup(cgroupsPath)
}

// podCgroup is the full path of a pod's cgroup parent as the runtime reports
// it: a path (the kubelet sends the systemd driver's slices expanded too), or
// a bare slice name.
func podCgroup(parent string) (string, bool) {
	if !strings.Contains(parent, "/") && strings.HasSuffix(parent, ".slice") {
		dir, ok := expandSlice(parent)
		return dir, ok && dir != "/"
	}
	return absCgroup(parent)
}

// absCgroup cleans an absolute cgroupfs path other than the root, under
// which every process would be.
func absCgroup(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") {
		return "", false
	}
	p = path.Clean(p)
	return p, p != "/"
}

// expandSlice is the cgroup path of a systemd slice unit: each '-' of its
// name opens a nested slice ("a-b.slice" is /a.slice/a-b.slice) and "-.slice"
// is the root. Names systemd refuses (an empty level, a '/') are refused.
func expandSlice(slice string) (string, bool) {
	name, ok := strings.CutSuffix(slice, ".slice")
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", false
	}
	if name == "-" {
		return "/", true
	}
	var dir, prefix string
	for _, level := range strings.Split(name, "-") {
		if level == "" {
			return "", false
		}
		dir += "/" + prefix + level + ".slice"
		prefix += level + "-"
	}
	return dir, true
}

// within tells whether cg is the cgroup dir or one below it: whole path
// components, never a prefix of a name.
func within(cg, dir string) bool {
	return cg == dir || strings.HasPrefix(cg, dir+"/")
}

// resolvePeer places a peer by its cgroup among the known pods and
// containers, comparing whole paths from the root: a peer is in a container
// when its cgroup is the one the runtime created for that container or one
// below it (a plugin may run in a sub-cgroup of its container). Matching a
// container's cgroup name anywhere in the path would let a process outside
// every pod claim one: a user's delegated systemd subtree may hold a
// cgroup named after any container's scope. A peer in no known container
// but under a pod's cgroup (its cgroup parent, or where its listed
// containers are) is unknown; any other peer, the runtime's own pods not
// containing it, is outside any pod. The runtime reads the peer's cgroup
// relative to its own cgroup namespace, as it creates its containers' cgroups;
// a peer outside that namespace reads with ".." components and is in none of
// them.
func resolvePeer(cg string, pods []*api.PodSandbox, ctrs []*api.Container) (PeerPlace, *PeerPod) {
	if cg == "" {
		return PeerUnknown, nil
	}
	if !strings.HasPrefix(cg, "/") || slices.Contains(strings.Split(cg, "/"), "..") {
		return PeerOutsidePod, nil
	}
	byID := map[string]*api.PodSandbox{}
	for _, p := range pods {
		byID[p.GetId()] = p
	}
	var podDirs []string
	for _, p := range pods {
		if dir, ok := podCgroup(p.GetLinux().GetCgroupParent()); ok {
			podDirs = append(podDirs, dir)
		}
	}
	for _, c := range ctrs {
		want, ok := containerCgroup(c.GetLinux().GetCgroupsPath())
		if !ok {
			continue
		}
		p := byID[c.GetPodSandboxId()]
		if p != nil && p.GetLinux().GetCgroupParent() == "" {
			if dir := path.Dir(want); dir != "/" {
				podDirs = append(podDirs, dir)
			}
		}
		if !within(cg, want) {
			continue
		}
		if p == nil {
			return PeerUnknown, nil
		}
		gen, err := strconv.ParseInt(p.GetLabels()["pod-template-generation"], 10, 64)
		return PeerInPod, &PeerPod{Namespace: p.GetNamespace(), Name: p.GetName(), UID: p.GetUid(),
			ContainerID: c.GetId(), TemplateGeneration: gen, HasTemplateGeneration: err == nil,
			Labels: maps.Clone(p.GetLabels()), Handover: p.GetAnnotations()[HandoverAnnotation]}
	}
	for _, dir := range podDirs {
		if within(cg, dir) {
			return PeerUnknown, nil
		}
	}
	return PeerOutsidePod, nil
}

// IdentityRefusal is SupersedeSameWorkload's typed refusal, naming both sides.
type IdentityRefusal struct {
	Reason                 string // unknown-peer, pod-vs-host, other-namespace, other-workload, other-uid
	Predecessor, Successor PeerIdentity
}

// PeerIdentity is a peer's uid and place, for the workload policy.
type PeerIdentity struct {
	UID   int
	Place PeerPlace
	Pod   *PeerPod
}

// PodString names the pod for logs: "pod ns/name (template generation N)",
// "outside any pod" or "unknown pod".
func (id PeerIdentity) PodString() string {
	switch id.Place {
	case PeerInPod:
		return "pod " + id.Pod.Namespace + "/" + id.Pod.Name + " (template generation " + strconv.FormatInt(id.Pod.TemplateGeneration, 10) + ")"
	case PeerOutsidePod:
		return "outside any pod"
	}
	return "unknown pod"
}

func (e *IdentityRefusal) Error() string {
	return "identity policy refuses (" + e.Reason + "): successor " + e.Successor.PodString() +
		" uid " + strconv.Itoa(e.Successor.UID) + " may not supersede predecessor " +
		e.Predecessor.PodString() + " uid " + strconv.Itoa(e.Predecessor.UID)
}

// SupersedeSameWorkload: a pod instance may supersede only one in a pod of
// the same namespace and workload (KubernetesResolver's: the controller that
// created the pod, by its name); a peer outside any pod only one outside
// any pod with the same uid; an unknown peer nobody and nobody it.
func SupersedeSameWorkload(pred, succ PeerIdentity) error {
	return supersedeSameWorkload(KubernetesResolver{}, pred, succ)
}

// supersedeSameWorkload is SupersedeSameWorkload with r naming workloads.
func supersedeSameWorkload(r WorkloadResolver, pred, succ PeerIdentity) error {
	refuse := func(r string) error { return &IdentityRefusal{Reason: r, Predecessor: pred, Successor: succ} }
	switch {
	case pred.Place == PeerUnknown || succ.Place == PeerUnknown:
		return refuse("unknown-peer")
	case pred.Place != succ.Place:
		return refuse("pod-vs-host")
	case pred.Place == PeerOutsidePod:
		if pred.UID < 0 || pred.UID != succ.UID {
			return refuse("other-uid")
		}
		return nil
	case pred.Pod.Namespace != succ.Pod.Namespace:
		return refuse("other-namespace")
	case r.Workload(pred.Pod) != r.Workload(succ.Pod):
		return refuse("other-workload")
	}
	return nil
}

// errIdentityUnsupported: the platform cannot read a peer's cgroup without
// racing pid reuse (no SO_PEERPIDFD: Linux before 6.5, or not Linux). The
// workload rule then cannot apply to that peer, and the supersede policy on
// credentials decides alone, as it does with the workload rule off.
var errIdentityUnsupported = errors.New("the peer's cgroup cannot be read race-free on this platform")

// verified is where the runtime placed a plugin's process, resolved once
// (resolveIdentities) and kept for the plugin's life.
type verified struct {
	place PeerPlace
	pod   *PeerPod
}

// identity is what the runtime verified of p: its uid and, once resolved,
// where it runs. g.mu is held.
func (p *plugin) identity() PeerIdentity {
	id := PeerIdentity{UID: p.cred.UID, Place: PeerUnknown}
	if p.ident != nil {
		id.Place, id.Pod = p.ident.place, p.ident.pod
	}
	return id
}

// workloadChecked tells whether the workload rule applies between p and q:
// it is on and both peers' cgroups can be verified on this platform.
func (pol *handoverPolicy) workloadChecked(p, q *plugin) bool {
	return pol.resolver != nil && !errors.Is(p.cgroupErr, errIdentityUnsupported) && !errors.Is(q.cgroupErr, errIdentityUnsupported)
}

// precedence is p's rollout generation: its pod's pod-template-generation
// with the workload rule on (the DaemonSet controller sets it, monotonic over
// rollouts and rollbacks), else what p declared; ok is false when neither is
// known. g.mu is held.
func (pol *handoverPolicy) precedence(p *plugin) (gen uint64, ok bool) {
	if pol.resolver != nil && p.ident != nil && p.ident.place == PeerInPod {
		if pod := p.ident.pod; pod.HasTemplateGeneration && pod.TemplateGeneration >= 0 {
			return uint64(pod.TemplateGeneration), true
		}
	}
	return p.generation, p.generation != 0
}

// resolveIdentities places p's process, with the workload rule on, when the
// rules will ask where it runs: p opted into handover, or p's name is held by
// opted-in instances it might be refused beside. The plugins of p's name
// placed before and not yet resolved (plugins written for upstream that an
// opted-in p could take over) are placed from the same listing: the pods and
// containers the ledger holds, before p is placed.
func (g *registry) resolveIdentities(ctx context.Context, p *plugin) {
	r := g.policy.resolver
	if r == nil || p.kind != kindExternal {
		return
	}
	g.mu.Lock()
	// A plugin written for upstream is placed too while the runtime offers
	// handover: its pod's annotation may put it in a workload group.
	if !p.handsOver() && len(g.named[p.base]) == 0 && !g.r.handover {
		g.mu.Unlock()
		return
	}
	todo := []*plugin{p}
	for q := range g.all {
		if q != p && q.slot != nil && q.kind == kindExternal && q.base == p.base && q.ident == nil {
			todo = append(todo, q)
		}
	}
	g.mu.Unlock()

	found := make([]*verified, len(todo))
	listed := false
	for i, q := range todo {
		if q.cgroupErr != nil {
			found[i] = &verified{place: PeerUnknown}
		}
	}
	if slices.ContainsFunc(found, func(v *verified) bool { return v == nil }) {
		// From the ledger, never from SyncFn: this runs beside runtime
		// operations (the ledger). A ledger dropped for its size is seeded
		// again here if the sync gate is free at once.
		if !g.r.ledger.Recording() {
			g.r.checkLedger(ctx)
		}
		if pods, ctrs, ok := g.r.ledger.Listing(); ok {
			listed = true
			for i, q := range todo {
				if found[i] == nil {
					place, pod := r.Place(q.cgroup, pods, ctrs)
					found[i] = &verified{place: place, pod: pod}
				}
			}
		} else if p.handsOver() {
			g.r.log.Warnf(ctx, "plugin %s: cannot place its process: the runtime's pods are not recorded", p.name())
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, q := range todo {
		if q.ident == nil && found[i] != nil && (listed || q.cgroupErr != nil) {
			q.ident = found[i]
		}
	}
}

// placed names where the runtime placed p's process, for the admission log
// line, if it did.
func (g *registry) placed(p *plugin) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p.ident == nil {
		return "", false
	}
	return p.identity().PodString(), true
}

// podIdentity is p's verified pod for a Takeover, nil outside any pod.
// g.mu is held.
func (p *plugin) podIdentity() *api.PodIdentity {
	if p.ident == nil || p.ident.place != PeerInPod {
		return nil
	}
	pod := p.ident.pod
	return &api.PodIdentity{Namespace: pod.Namespace, Name: pod.Name, Uid: pod.UID, TemplateGeneration: pod.TemplateGeneration}
}

// podsOfTakeover is the takeover log line's tail saying where both instances
// run, when the runtime placed the successor: each place once, so that an
// operator reads a move between pods, or that none happened, at a glance.
func (g *registry) podsOfTakeover(p *plugin, t *api.Takeover) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p.ident == nil {
		return ""
	}
	var pred *PeerIdentity
	if s := p.slot; s != nil && s.active != nil && s.active != p && s.active.ident != nil &&
		s.active.instance == t.GetPredecessorInstance() && s.active.generation == t.GetPredecessorGeneration() {
		id := s.active.identity()
		pred = &id
	}
	return takeoverPlaces(p.identity(), pred)
}

// takeoverPlaces words where a successor runs and, if known (pred set),
// where its predecessor ran: ", both outside any pod", ", moving from pod
// ns/a (template generation 1) to pod ns/b (template generation 2)", or
// ", itself in pod ns/b (template generation 2)".
func takeoverPlaces(succ PeerIdentity, pred *PeerIdentity) string {
	switch {
	case pred == nil || pred.Place == PeerUnknown:
		return ", itself " + placeIn(succ)
	case pred.PodString() == succ.PodString():
		return ", both " + placeIn(succ)
	}
	return ", moving from " + placeName(*pred) + " to " + placeName(succ)
}

// placeName names where a peer runs, as the object of "from" or "to".
func placeName(id PeerIdentity) string {
	if id.Place == PeerUnknown {
		return "an unknown pod"
	}
	return id.PodString()
}

// placeIn names where a peer runs, as a complement: "in pod ..." or
// "outside any pod".
func placeIn(id PeerIdentity) string {
	if id.Place == PeerOutsidePod {
		return id.PodString()
	}
	return "in " + placeName(id)
}

// HandoverAnnotation on a plugin's pod template (so on each of its pods,
// which the runtime sees as PodSandbox annotations) with the value
// HandoverWorkload tells the runtime that the connections of one plugin name
// and index from pods of this workload are instances of one plugin, of which
// one at a time receives events. An annotation rather than a label: it
// changes no selector. On the pod rather than the DaemonSet: the runtime
// sees pods only. The value names the rule, so that another one can be
// added.
const HandoverAnnotation = "nri.containerd.io/handover"

// HandoverWorkload is the value of HandoverAnnotation that turns workload
// groups on for the pod's plugins.
const HandoverWorkload = "workload"
