package adaptation

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
)

// A container created while a cursor is open is journaled as the runtime
// reports it once created: the merged adjustment applied once, as the
// runtime's generator applies it, to the container as the runtime sent it
// (merging the replies edits the request's container in place).
func TestLedgerCreatedContainerIsTheRuntimes(t *testing.T) {
	rt := newFakeRuntime()
	pod := &api.PodSandbox{Id: "p1"}
	rt.pods = []*api.PodSandbox{pod}
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	p := newFakePlugin("10", "p", nil)
	p.handle = func(_ context.Context, e api.Event, _ any) (any, error) {
		if e != api.Event_CREATE_CONTAINER {
			return nil, nil
		}
		a := &api.ContainerAdjustment{}
		a.RemoveMount("/data")
		a.AddMount(&api.Mount{Destination: "/cache", Type: "tmpfs", Source: "tmpfs"})
		a.AddHooks(&api.Hooks{Poststop: []*api.Hook{{Path: "/bin/cleanup"}}})
		a.AddRlimit("RLIMIT_NPROC", 10, 5)
		a.RemoveEnv("A")
		a.AddEnv("X", "1")
		a.AddDevice(&api.LinuxDevice{Path: "/dev/nvidia0", Type: "c", Major: 195})
		a.SetLinuxMemoryLimit(1 << 30)
		a.SetLinuxMemoryReservation(1 << 29) // the runtime does not apply it
		a.SetLinuxOomScoreAdj(ptrTo(-500))
		return &api.CreateContainerResponse{Adjust: a}, nil
	}
	p.connect(t, sock)
	defer p.close()
	waitActive(t, r, "10-p")

	cur := r.ledger.OpenCursor()
	defer cur.Close()
	sent := &api.Container{
		Id: "c1", PodSandboxId: "p1", Name: "c1",
		Args:   []string{"/bin/app"},
		Env:    []string{"A=1", "B=2"},
		Mounts: []*api.Mount{{Destination: "/data", Type: "bind", Source: "/srv"}},
		Hooks:  &api.Hooks{Poststop: []*api.Hook{{Path: "/bin/old"}}},
		Linux:  &api.LinuxContainer{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "0"}}},
	}
	rsp, err := r.CreateContainer(context.Background(), &CreateContainerRequest{Pod: pod, Container: proto.Clone(sent).(*api.Container)})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}

	d, ok := cur.Since()
	if !ok || len(d.Ctrs) != 1 {
		t.Fatalf("journal: ok %v, containers %v", ok, d.Ctrs)
	}
	got := d.Ctrs[0]
	want := proto.Clone(sent).(*api.Container)
	if err := adjust.Apply(want, rsp.GetAdjust()); err != nil {
		t.Fatal(err)
	}
	want.State = api.ContainerState_CONTAINER_CREATED
	if !proto.Equal(got, want) {
		t.Errorf("journaled\n%v\nthe runtime has\n%v", got, want)
	}
	var dests []string
	for _, m := range got.Mounts {
		dests = append(dests, m.Destination)
	}
	if !slices.Equal(dests, []string{"/cache"}) {
		t.Errorf("mounts %v, want [/cache]", dests)
	}
	if hooks := got.GetHooks().GetPoststop(); len(hooks) != 2 {
		t.Errorf("poststop hooks %v, want the container's and the plugin's", hooks)
	}
	// The merged adjustment carries no environment removal (upstream's
	// merge drops them), so the runtime keeps A; the request's container,
	// edited in place, lost it.
	if len(got.Rlimits) != 1 || !slices.Equal(got.Env, []string{"A=1", "B=2", "X=1"}) {
		t.Errorf("rlimits %v, env %v", got.Rlimits, got.Env)
	}
	l := got.GetLinux()
	if len(l.GetDevices()) != 1 || l.GetOomScoreAdj().GetValue() != -500 ||
		l.GetResources().GetMemory().GetLimit().GetValue() != 1<<30 ||
		l.GetResources().GetMemory().GetReservation() != nil || l.GetResources().GetCpu().GetCpus() != "0" {
		t.Errorf("linux %v", l)
	}
}

func ptrTo[T any](v T) *T { return &v }
