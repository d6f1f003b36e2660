package adaptation

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

// Micro-benchmarks of the pieces of the event path on their own (make bench
// reports them in docs/benchmarks.md): merging plugin results, ownership
// checks, the sync gate and protobuf encoding. They only run with -bench.

// microPod and microContainer are shaped like the benchmark runtimes'
// (test/bench/ournri).
func microPod(id string) *api.PodSandbox {
	return &api.PodSandbox{
		Id: id, Name: id, Uid: "uid-" + id, Namespace: "bench",
		Labels:      map[string]string{"app": "bench", "pod": id},
		Annotations: map[string]string{"kubernetes.io/config.source": "api"},
	}
}

func microContainer(pod, id string) *api.Container {
	return &api.Container{
		Id: id, PodSandboxId: pod, Name: id, State: api.ContainerState_CONTAINER_CREATED,
		Labels:      map[string]string{"io.kubernetes.container.name": id, "app": "bench"},
		Annotations: map[string]string{"io.kubernetes.container.hash": "0123abcd", "bench": "yes"},
		Args:        []string{"/bin/app", "--serve", "--port=8080"},
		Env:         []string{"PATH=/usr/bin:/bin", "HOME=/root", "POD=" + pod},
		Mounts: []*api.Mount{
			{Destination: "/etc/hosts", Type: "bind", Source: "/var/lib/pods/" + pod + "/hosts", Options: []string{"rbind", "ro"}},
		},
	}
}

// microResponse is plugin i's answer to CreateContainer: an annotation and
// an environment variable of its own, and with resources a memory limit
// (plugin 0) or CPU shares (plugin 1), merged through the scalar tables.
func microResponse(i int, resources bool) *api.CreateContainerResponse {
	adj := &api.ContainerAdjustment{}
	adj.AddAnnotation(fmt.Sprintf("bench.nri.io/plugin%d", i), "yes")
	adj.AddEnv(fmt.Sprintf("BENCH_PLUGIN%d", i), "yes")
	if resources {
		switch i {
		case 0:
			adj.SetLinuxMemoryLimit(1 << 30)
		case 1:
			adj.SetLinuxCPUShares(512)
		}
	}
	return &api.CreateContainerResponse{Adjust: adj}
}

// BenchmarkMergeCreateContainer merges the CreateContainer answers of n
// plugins into the response handed back to the runtime. Requests are built
// outside the timer: merging updates them in place.
func BenchmarkMergeCreateContainer(b *testing.B) {
	const batch = 1024
	pod := microPod("pod")
	for _, resources := range []bool{false, true} {
		for _, n := range []int{1, 4, 16} {
			name := fmt.Sprintf("plugins=%d", n)
			if resources {
				name += "/with-resources"
			}
			b.Run(name, func(b *testing.B) {
				var names []string
				var rpls []*api.CreateContainerResponse
				for i := range n {
					names = append(names, fmt.Sprintf("%02d-plugin%d", i, i))
					rpls = append(rpls, microResponse(i, resources))
				}
				reqs := make([]*api.CreateContainerRequest, batch)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if i%batch == 0 {
						b.StopTimer()
						for j := range reqs {
							reqs[j] = &api.CreateContainerRequest{Pod: pod, Container: microContainer(pod.Id, "ctr")}
						}
						b.StartTimer()
					}
					res := collectCreateContainerResult(reqs[i%batch])
					for j, rpl := range rpls {
						if err := res.apply(rpl, names[j]); err != nil {
							b.Fatal(err)
						}
					}
					_ = res.createContainerResponse()
				}
			})
		}
	}
}

// BenchmarkOwnershipClaims claims the fields one plugin adjusts (an
// annotation, an environment variable, a mount and a memory limit) for a
// fresh container, as merging does for every plugin, and a conflicting
// claim by a second plugin.
func BenchmarkOwnershipClaims(b *testing.B) {
	b.Run("claim-4-fields", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			o := api.NewOwningPlugins()
			if err := claimFour(o, "ctr", "10-a"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("conflict", func(b *testing.B) {
		o := api.NewOwningPlugins()
		if err := claimFour(o, "ctr", "10-a"); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if o.ClaimEnv("ctr", "BENCH", "20-b") == nil {
				b.Fatal("conflicting claim accepted")
			}
		}
	})
}

func claimFour(o *api.OwningPlugins, id, plugin string) error {
	if err := o.ClaimAnnotation(id, "bench.nri.io/a", plugin); err != nil {
		return err
	}
	if err := o.ClaimEnv(id, "BENCH", plugin); err != nil {
		return err
	}
	if err := o.ClaimMount(id, "/data", plugin); err != nil {
		return err
	}
	return o.ClaimHugepageLimit(id, "2MB", plugin)
}

// BenchmarkSyncGateParallel takes and releases BlockPluginSync from every
// CPU at once (runtime operations in parallel, nobody synchronizing).
func BenchmarkSyncGateParallel(b *testing.B) {
	r := &Adaptation{syncGate: newSyncGate()}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.BlockPluginSync().Unblock()
		}
	})
}

// BenchmarkSyncGateLock takes and releases the gate exclusively (a plugin
// synchronizing) with no runtime operation holding it.
func BenchmarkSyncGateLock(b *testing.B) {
	g := newSyncGate()
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := g.Lock(ctx); err != nil {
			b.Fatal(err)
		}
		g.Unlock()
	}
}

// BenchmarkEncode marshals what the runtime sends: a CreateContainer
// request, and a Synchronize request of 1 000 containers in 100 pods.
func BenchmarkEncode(b *testing.B) {
	pod := microPod("pod")
	create := &api.CreateContainerRequest{Pod: pod, Container: microContainer(pod.Id, "ctr")}
	sync := &api.SynchronizeRequest{}
	for p := range 100 {
		pod := microPod(fmt.Sprintf("pod-%d", p))
		sync.Pods = append(sync.Pods, pod)
		for c := range 10 {
			sync.Containers = append(sync.Containers, microContainer(pod.Id, fmt.Sprintf("ctr-%d-%d", p, c)))
		}
	}
	for _, m := range []struct {
		name string
		msg  proto.Message
	}{{"CreateContainerRequest", create}, {"SynchronizeRequest/ctrs=1000", sync}} {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := proto.Marshal(m.msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecode unmarshals a plugin's CreateContainer answer (an
// annotation and an environment variable).
func BenchmarkDecode(b *testing.B) {
	buf, err := proto.Marshal(microResponse(0, false))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var rpl api.CreateContainerResponse
		if err := proto.Unmarshal(buf, &rpl); err != nil {
			b.Fatal(err)
		}
	}
}
