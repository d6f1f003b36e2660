// A test a plugin's author can copy: two instances of the plugin, run
// in-process against nri-handover's in-memory runtime as a rollout runs
// them, and v2 takes over from v1; each one's synchronization reconciles the
// containers it finds. README.md, "Try a handover before deploying", points
// here; test/pluginmodule runs it in a module of its own.
package main

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

func TestHandover(t *testing.T) {
	// Bounds every wait, so that a bug fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	rt, err := testruntime.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	defer rt.Stop()
	if err := rt.RunPod(ctx, testruntime.NewPod("pod0")); err != nil {
		t.Fatal(err)
	}
	handledBy := func(id string) string {
		adj, err := rt.CreateContainer(ctx, testruntime.NewContainer("pod0", id))
		if err != nil {
			t.Fatalf("creating %s: %v", id, err)
		}
		return adj.GetAnnotations()["handled-by"]
	}
	// The plugin's synchronization sets every container's CPU shares to
	// reconciledShares; what it reconciled is in the runtime once
	// WaitSynchronized returned.
	shares := func(id string) uint64 {
		return rt.Container(id).GetLinux().GetResources().GetCpu().GetShares().GetValue()
	}
	if _, err := rt.CreateContainer(ctx, testruntime.NewContainer("pod0", "c0")); err != nil {
		t.Fatal(err)
	}

	// run starts one instance, as one pod of the DaemonSet would: its own
	// instance id, and a generation that grows with every rollout. In a pod
	// a superseded instance stays up until the pod is deleted; here
	// WithExitOnSuperseded makes Run return once the runtime said so, which
	// the test waits for.
	run := func(version, instance string, generation uint64, told *sync.Map) (stub.HandoverStub, <-chan error) {
		s, err := stub.NewHandoverStub(plugin{version, told}, stub.WithPluginName("myplugin"), stub.WithPluginIdx("50"),
			stub.WithSocketPath(rt.SocketPath()), stub.WithPluginVersion(version),
			stub.WithInstanceID(instance), stub.WithGeneration(generation), stub.WithHandover(),
			stub.WithExitOnSuperseded())
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		// The runtime made it active and applied the updates its
		// synchronization asked for (WaitReady returns before they are).
		if err := rt.WaitSynchronized(ctx, s); err != nil {
			t.Fatalf("%s never synchronized: %v", version, err)
		}
		return s, done
	}

	_, v1Done := run("v1", "pod-a", 1, nil)
	if got := shares("c0"); got != reconciledShares {
		t.Fatalf("c0 has %d CPU shares after v1 synchronized, want %d", got, reconciledShares)
	}
	if got := handledBy("c1"); got != "v1" {
		t.Fatalf("c1 handled by %q, want v1", got)
	}
	// Something else changes c0 meanwhile; v2's synchronization puts it back.
	if err := rt.UpdateContainer(ctx, "c0", &api.LinuxResources{Cpu: &api.LinuxCPU{Shares: &api.OptionalUInt64{Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	// v2's synchronization is told each container as the runtime has it
	// when v2 takes over: c0 as the update left it, c1 as v1 left it.
	want := map[string]uint64{"c0": shares("c0"), "c1": shares("c1")}
	var told sync.Map
	v2, v2Done := run("v2", "pod-b", 2, &told)
	for id, w := range want {
		if got, ok := told.Load(id); !ok || got.(uint64) != w {
			t.Errorf("v2's synchronization was told %s has %v CPU shares, the runtime had %d", id, got, w)
		}
	}
	for _, id := range []string{"c0", "c1"} {
		if got := shares(id); got != reconciledShares {
			t.Fatalf("%s has %d CPU shares after v2 took over, want %d", id, got, reconciledShares)
		}
	}
	if got := handledBy("c2"); got != "v2" {
		t.Fatalf("c2 handled by %q after the handover, want v2 alone", got)
	}

	if err := <-v1Done; !errors.Is(err, stub.ErrSuperseded) {
		t.Errorf("v1's Run: %v, want superseded", err)
	}
	v2.Stop()
	<-v2Done
}
