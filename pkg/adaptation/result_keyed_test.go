package adaptation

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nri-handover/nri/api"
)

// keyedFieldCase drives one keyed field through the removal tests: how a
// plugin sets or removes key K, and how the reply and the request show it.
type keyedFieldCase struct {
	name   string
	field  string // as named in conflict errors
	set    func(a *api.ContainerAdjustment, value string)
	remove func(a *api.ContainerAdjustment)
	// reply lists the reply's entries for K, marked ones as "-K", values as "K=v".
	reply func(a *api.ContainerAdjustment) []string
	// request lists the values K has in the request later plugins see.
	request func(c *api.Container) []string
	// orig puts K=orig into the runtime's container.
	orig func(c *api.Container)
}

const keyK = "K"

func keyedFieldCases() []keyedFieldCase {
	mapReply := func(m map[string]string) []string {
		var out []string
		if _, ok := m[api.MarkForRemoval(keyK)]; ok {
			out = append(out, api.MarkForRemoval(keyK))
		}
		if v, ok := m[keyK]; ok {
			out = append(out, keyK+"="+v)
		}
		return out
	}
	mapRequest := func(m map[string]string) []string {
		if v, ok := m[keyK]; ok {
			return []string{v}
		}
		return nil
	}
	linux := func(c *api.Container) *api.LinuxContainer {
		if c.Linux == nil {
			c.Linux = &api.LinuxContainer{}
		}
		return c.Linux
	}
	return []keyedFieldCase{
		{
			name: "annotations", field: `annotation "K"`,
			set:     func(a *api.ContainerAdjustment, v string) { a.AddAnnotation(keyK, v) },
			remove:  func(a *api.ContainerAdjustment) { a.RemoveAnnotation(keyK) },
			reply:   func(a *api.ContainerAdjustment) []string { return mapReply(a.GetAnnotations()) },
			request: func(c *api.Container) []string { return mapRequest(c.GetAnnotations()) },
			orig:    func(c *api.Container) { c.Annotations = map[string]string{keyK: "orig"} },
		},
		{
			name: "sysctls", field: `sysctl "K"`,
			set: func(a *api.ContainerAdjustment, v string) { a.SetLinuxSysctl(keyK, v) },
			remove: func(a *api.ContainerAdjustment) {
				a.SetLinuxSysctl(api.MarkForRemoval(keyK), "")
			},
			reply:   func(a *api.ContainerAdjustment) []string { return mapReply(a.GetLinux().GetSysctl()) },
			request: func(c *api.Container) []string { return mapRequest(c.GetLinux().GetSysctl()) },
			orig:    func(c *api.Container) { linux(c).Sysctl = map[string]string{keyK: "orig"} },
		},
		{
			name: "network devices", field: `network device "K"`,
			set: func(a *api.ContainerAdjustment, v string) {
				a.AddLinuxNetDevice(keyK, &api.LinuxNetDevice{Name: v})
			},
			remove: func(a *api.ContainerAdjustment) { a.RemoveLinuxNetDevice(keyK) },
			reply: func(a *api.ContainerAdjustment) []string {
				names := map[string]string{}
				for k, d := range a.GetLinux().GetNetDevices() {
					names[k] = d.GetName()
				}
				return mapReply(names)
			},
			request: func(c *api.Container) []string {
				if d, ok := c.GetLinux().GetNetDevices()[keyK]; ok {
					return []string{d.GetName()}
				}
				return nil
			},
			orig: func(c *api.Container) {
				linux(c).NetDevices = map[string]*api.LinuxNetDevice{keyK: {Name: "orig"}}
			},
		},
		{
			name: "mounts", field: `mount "K"`,
			set:    func(a *api.ContainerAdjustment, v string) { a.AddMount(&api.Mount{Destination: keyK, Source: v}) },
			remove: func(a *api.ContainerAdjustment) { a.RemoveMount(keyK) },
			reply: func(a *api.ContainerAdjustment) []string {
				return listView(a.GetMounts(), (*api.Mount).GetDestination, (*api.Mount).GetSource)
			},
			request: func(c *api.Container) []string {
				return listValues(c.GetMounts(), (*api.Mount).GetDestination, (*api.Mount).GetSource)
			},
			orig: func(c *api.Container) { c.Mounts = []*api.Mount{{Destination: keyK, Source: "orig"}} },
		},
		{
			name: "devices", field: `device "K"`,
			set: func(a *api.ContainerAdjustment, v string) {
				a.AddDevice(&api.LinuxDevice{Path: keyK, Type: v})
			},
			remove: func(a *api.ContainerAdjustment) { a.RemoveDevice(keyK) },
			reply: func(a *api.ContainerAdjustment) []string {
				return listView(a.GetLinux().GetDevices(), (*api.LinuxDevice).GetPath, (*api.LinuxDevice).GetType)
			},
			request: func(c *api.Container) []string {
				return listValues(c.GetLinux().GetDevices(), (*api.LinuxDevice).GetPath, (*api.LinuxDevice).GetType)
			},
			orig: func(c *api.Container) { linux(c).Devices = []*api.LinuxDevice{{Path: keyK, Type: "orig"}} },
		},
		{
			name: "environment", field: `environment variable "K"`,
			set:    func(a *api.ContainerAdjustment, v string) { a.AddEnv(keyK, v) },
			remove: func(a *api.ContainerAdjustment) { a.RemoveEnv(keyK) },
			reply: func(a *api.ContainerAdjustment) []string {
				return listView(a.GetEnv(), (*api.KeyValue).GetKey, (*api.KeyValue).GetValue)
			},
			request: func(c *api.Container) []string {
				var out []string
				for _, e := range c.GetEnv() {
					if k, v, _ := strings.Cut(e, "="); k == keyK {
						out = append(out, v)
					}
				}
				return out
			},
			orig: func(c *api.Container) { c.Env = []string{keyK + "=orig"} },
		},
	}
}

// listView renders a list's entries for K in order: "-K" or "K=value".
func listView[T any](list []T, key, value func(T) string) []string {
	var out []string
	for _, e := range list {
		switch k := key(e); k {
		case keyK:
			out = append(out, k+"="+value(e))
		case api.MarkForRemoval(keyK):
			out = append(out, k)
		}
	}
	return out
}

func listValues[T any](list []T, key, value func(T) string) []string {
	var out []string
	for _, e := range list {
		if key(e) == keyK {
			out = append(out, value(e))
		}
	}
	return out
}

// A removal marker and a value set for the same key by different plugins
// merge, in either order, exactly as upstream NRI v0.12.5 merges them; the
// table's rows are upstream's replies. A removal only conflicts with a later
// value where it took over the key: where it took away what an earlier
// plugin set in the reply (lists), or where it replaced the key in the same
// adjustment.
func TestResultRemovalAndValueFromDifferentPlugins(t *testing.T) {
	type want struct {
		reply, request []string
		thirdConflicts string // the owner a third plugin setting K conflicts with
	}
	type adjustments struct {
		a, b func(f keyedFieldCase, adj *api.ContainerAdjustment)
	}
	set := func(v string) func(keyedFieldCase, *api.ContainerAdjustment) {
		return func(f keyedFieldCase, adj *api.ContainerAdjustment) { f.set(adj, v) }
	}
	remove := func(f keyedFieldCase, adj *api.ContainerAdjustment) { f.remove(adj) }
	replace := func(v string) func(keyedFieldCase, *api.ContainerAdjustment) {
		return func(f keyedFieldCase, adj *api.ContainerAdjustment) { f.remove(adj); f.set(adj, v) }
	}

	scenarios := []struct {
		name string
		adjustments
		want map[string]want // by field case name
	}{
		{
			name:        "a removes K, then b sets it",
			adjustments: adjustments{remove, set("b")},
			want: map[string]want{
				"annotations":     {[]string{"-K", "K=b"}, []string{"b"}, "b"},
				"sysctls":         {[]string{"-K", "K=b"}, []string{"b"}, "b"},
				"network devices": {[]string{"-K", "K=b"}, []string{"b"}, "b"},
				"mounts":          {[]string{"-K", "K=b"}, []string{"b"}, "b"},
				"devices":         {[]string{"K=b"}, []string{"b"}, "b"},
				"environment":     {[]string{"K=b"}, []string{"b"}, "b"},
			},
		},
		{
			name:        "a sets K, then b removes it",
			adjustments: adjustments{set("a"), remove},
			want: map[string]want{
				"annotations":     {[]string{"-K", "K=a"}, []string{"a"}, "a"},
				"sysctls":         {[]string{"-K", "K=a"}, []string{"a"}, "a"},
				"network devices": {[]string{"-K", "K=a"}, []string{"a"}, "a"},
				"mounts":          {[]string{"-K"}, nil, "b"},
				// Devices and environment variables drop what the earlier
				// plugin set too, but never forward the removal.
				"devices":     {nil, nil, "b"},
				"environment": {nil, nil, "b"},
			},
		},
		{
			name:        "a sets K, then b replaces it",
			adjustments: adjustments{set("a"), replace("b")},
			want: map[string]want{
				"annotations":     {[]string{"-K", "K=b"}, []string{"b"}, "b"},
				"sysctls":         {[]string{"-K", "K=b"}, []string{"b"}, "b"},
				"network devices": {[]string{"-K", "K=b"}, []string{"b"}, "b"},
				"mounts":          {[]string{"K=b"}, []string{"b"}, "b"},
				"devices":         {[]string{"K=b"}, []string{"b"}, "b"},
				"environment":     {[]string{"K=b"}, []string{"b"}, "b"},
			},
		},
	}
	for _, sc := range scenarios {
		for _, f := range keyedFieldCases() {
			t.Run(sc.name+"/"+f.name, func(t *testing.T) {
				w, ok := sc.want[f.name]
				if !ok {
					t.Fatalf("no expectation for %s", f.name)
				}
				req := newCreateRequest()
				f.orig(req.Container)
				r := collectCreateContainerResult(req)
				adjA, adjB := &api.ContainerAdjustment{}, &api.ContainerAdjustment{}
				sc.a(f, adjA)
				sc.b(f, adjB)
				applyAll(t, r, adjusted(adjA), adjusted(adjB))

				if got := f.reply(r.createContainerResponse().Adjust); !slices.Equal(got, w.reply) {
					t.Errorf("reply for K = %q, want %q", got, w.reply)
				}
				if got := f.request(req.Container); !slices.Equal(got, w.request) {
					t.Errorf("request for K = %q, want %q", got, w.request)
				}

				third := &api.ContainerAdjustment{}
				f.set(third, "c")
				err := r.apply(adjusted(third), "c")
				wantErr := fmt.Sprintf(`plugins "c" and %q both tried to set %s`, w.thirdConflicts, f.field)
				if err == nil || !strings.Contains(err.Error(), wantErr) {
					t.Errorf("third plugin setting K: error %v, want %q", err, wantErr)
				}
			})
		}
	}
}

// A plugin that replaced a key (removal and value in one adjustment) owns
// it: a later value is a conflict, as upstream reports.
func TestResultReplacedKeyConflictsWithLaterValue(t *testing.T) {
	for _, f := range keyedFieldCases() {
		t.Run(f.name, func(t *testing.T) {
			r := collectCreateContainerResult(newCreateRequest())
			adjA, adjB := &api.ContainerAdjustment{}, &api.ContainerAdjustment{}
			f.remove(adjA)
			f.set(adjA, "a")
			f.set(adjB, "b")
			applyAll(t, r, adjusted(adjA))
			err := r.apply(adjusted(adjB), "b")
			want := `plugins "b" and "a" both tried to set ` + f.field
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want %q", err, want)
			}
		})
	}
}

// Namespaces are claimed also by a removal, so a removal and a value for
// the same namespace type conflict in either order, as upstream has it.
func TestResultNamespaceRemovalConflicts(t *testing.T) {
	removeNS := &api.ContainerAdjustment{}
	removeNS.RemoveNamespace(&api.LinuxNamespace{Type: "ipc"})
	setNS := &api.ContainerAdjustment{}
	setNS.AddOrReplaceNamespace(&api.LinuxNamespace{Type: "ipc", Path: "/p"})
	for name, order := range map[string][2]*api.ContainerAdjustment{
		"removal first": {removeNS, setNS},
		"value first":   {setNS, removeNS},
	} {
		t.Run(name, func(t *testing.T) {
			r := collectCreateContainerResult(newCreateRequest())
			applyAll(t, r, adjusted(order[0]))
			err := r.apply(adjusted(order[1]), "b")
			if err == nil || !strings.Contains(err.Error(), `plugins "b" and "a" both tried to set namespace "ipc"`) {
				t.Fatalf("error %v", err)
			}
		})
	}
}

// Rlimits and hugepage limits are appended as upstream appends them: an
// entry for a type or page size the runtime already had is added after it,
// and the runtime sees both.
func TestResultAppendsRlimitsAndHugepageLimits(t *testing.T) {
	req := newCreateRequest()
	req.Container.Rlimits = []*api.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1, Soft: 1}}
	r := collectCreateContainerResult(req)
	adj := &api.ContainerAdjustment{}
	adj.AddRlimit("RLIMIT_NOFILE", 2, 2)
	applyAll(t, r, adjusted(adj))
	if got := len(req.Container.Rlimits); got != 2 {
		t.Errorf("request rlimits = %v, want the runtime's and the plugin's", req.Container.Rlimits)
	}

	upd := &api.UpdateContainerRequest{
		Container: &api.Container{Id: "ctr0"},
		LinuxResources: &api.LinuxResources{
			HugepageLimits: []*api.HugepageLimit{{PageSize: "2MB", Limit: 1}},
		},
	}
	r = collectUpdateContainerResult(upd)
	applyAll(t, r, &api.UpdateContainerResponse{Update: []*api.ContainerUpdate{{
		ContainerId: "ctr0",
		Linux: &api.LinuxContainerUpdate{Resources: &api.LinuxResources{
			HugepageLimits: []*api.HugepageLimit{{PageSize: "2MB", Limit: 2}},
		}},
	}}})
	got := r.updateContainerResponse().Update[0].GetLinux().GetResources().GetHugepageLimits()
	if len(got) != 2 || got[0].GetLimit() != 1 || got[1].GetLimit() != 2 {
		t.Errorf("reply hugepage limits = %v, want the runtime's then the plugin's", got)
	}
}
