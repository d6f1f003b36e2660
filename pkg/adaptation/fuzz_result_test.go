package adaptation

import (
	"regexp"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

// FuzzMergeResults merges arbitrary responses of three plugins (protobuf
// wire bytes, as a plugin sends them) into a CreateContainer or an
// UpdateContainer result: no panic, the same outcome every time (so the
// conflict reported cannot depend on map order), and a conflict error names
// the plugin that failed and one that had already set the field.
func FuzzMergeResults(f *testing.F) {
	for _, rs := range fuzzMergeSeeds() {
		var bs [3][]byte
		for i, m := range rs {
			b, err := proto.Marshal(m)
			if err != nil {
				f.Fatal(err)
			}
			bs[i] = b
		}
		f.Add(bs[0], bs[1], bs[2], false)
		f.Add(bs[0], bs[1], bs[2], true)
	}

	f.Fuzz(func(t *testing.T, a, b, c []byte, update bool) {
		first, err1 := fuzzMerge(a, b, c, update)
		if bad, ok := err1.(*fuzzFailure); ok {
			t.Fatal(bad.msg)
		}
		second, err2 := fuzzMerge(a, b, c, update)
		if errString(err1) != errString(err2) {
			t.Fatalf("merge not deterministic: %q, then %q", errString(err1), errString(err2))
		}
		if !proto.Equal(first, second) {
			t.Fatalf("merge not deterministic:\n%v\n%v", first, second)
		}
	})
}

var conflictRE = regexp.MustCompile(`^plugins "([^"]*)" and "([^"]*)" both tried to set `)

// fuzzMerge applies the three responses in order, as plugins a, b and c.
func fuzzMerge(a, b, c []byte, update bool) (proto.Message, error) {
	var r *result
	if update {
		r = collectUpdateContainerResult(&api.UpdateContainerRequest{
			Container:      &api.Container{Id: "ctr0"},
			LinuxResources: &api.LinuxResources{Memory: &api.LinuxMemory{Limit: &api.OptionalInt64{Value: 1 << 30}}},
		})
	} else {
		r = collectCreateContainerResult(newCreateRequest())
	}
	plugins := []string{"10-a", "20-b", "30-c"}
	for i, raw := range [][]byte{a, b, c} {
		var rpl any
		if update {
			m := &api.UpdateContainerResponse{}
			if proto.Unmarshal(raw, m) != nil {
				continue // ttrpc would refuse the reply before merging
			}
			rpl = m
		} else {
			m := &api.CreateContainerResponse{}
			if proto.Unmarshal(raw, m) != nil {
				continue
			}
			rpl = m
		}
		if err := r.apply(rpl, plugins[i]); err != nil {
			if m := conflictRE.FindStringSubmatch(err.Error()); m != nil {
				if m[1] != plugins[i] || !slices.Contains(plugins[:i+1], m[2]) {
					return nil, &fuzzFailure{"conflict names " + m[1] + " and " + m[2] + ", applying " + plugins[i] + ": " + err.Error()}
				}
			}
			return nil, err
		}
	}
	if update {
		return r.updateContainerResponse(), nil
	}
	return r.createContainerResponse(), nil
}

type fuzzFailure struct{ msg string }

func (e *fuzzFailure) Error() string { return e.msg }

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// fuzzMergeSeeds are responses that overlap in every kind of field, so that
// mutations keep hitting the claims, removals and conflicts.
func fuzzMergeSeeds() [][3]proto.Message {
	adj := func(a *api.ContainerAdjustment) *api.CreateContainerResponse {
		return &api.CreateContainerResponse{Adjust: a}
	}
	res := func(id string, mem int64, cpus string) *api.ContainerUpdate {
		return &api.ContainerUpdate{ContainerId: id, Linux: &api.LinuxContainerUpdate{Resources: &api.LinuxResources{
			Memory: &api.LinuxMemory{Limit: &api.OptionalInt64{Value: mem}}, Cpu: &api.LinuxCPU{Cpus: cpus},
		}}}
	}
	full, other := disjointAdjustments()
	clash := &api.ContainerAdjustment{
		Annotations: map[string]string{"a": "2", "b": "2"},
		Env:         []*api.KeyValue{{Key: "A", Value: "2"}},
		Mounts:      []*api.Mount{{Destination: "/a", Source: "/t"}},
		Linux: &api.LinuxContainerAdjustment{
			Resources: &api.LinuxResources{Memory: &api.LinuxMemory{Limit: &api.OptionalInt64{Value: 2 << 20}}},
			Sysctl:    map[string]string{"net.b": "3", "net.a": "3"},
		},
	}
	remove := &api.ContainerAdjustment{
		Annotations: map[string]string{"-a": "", "a": "3"},
		Mounts:      []*api.Mount{{Destination: "-/a"}, {Destination: "/a", Source: "/u"}},
		Env:         []*api.KeyValue{{Key: "-A"}},
		Linux: &api.LinuxContainerAdjustment{
			Devices:    []*api.LinuxDevice{{Path: "-/dev/a"}},
			Namespaces: []*api.LinuxNamespace{{Type: "-network"}},
			NetDevices: map[string]*api.LinuxNetDevice{"-eth1": nil},
		},
	}
	return [][3]proto.Message{
		{adj(full), adj(other), adj(clash)},
		{adj(full), adj(clash), adj(remove)},
		{adj(full), adj(remove), adj(clash)},
		{&api.CreateContainerResponse{Update: []*api.ContainerUpdate{res("ctr1", 1<<20, "0")}},
			&api.CreateContainerResponse{Update: []*api.ContainerUpdate{res("ctr1", 2<<20, "1"), res("ctr0", 1, "")}},
			&api.CreateContainerResponse{Evict: []*api.ContainerEviction{{ContainerId: "ctr1", Reason: "x"}}}},
		{&api.UpdateContainerResponse{Update: []*api.ContainerUpdate{res("ctr0", 1<<20, "0"), res("ctr1", 1<<20, "")}},
			&api.UpdateContainerResponse{Update: []*api.ContainerUpdate{res("ctr0", 2<<20, "1")}},
			&api.UpdateContainerResponse{Update: []*api.ContainerUpdate{{ContainerId: "ctr0", IgnoreFailure: true,
				Linux: &api.LinuxContainerUpdate{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "2"}}}}}}},
	}
}
