package adaptation

import (
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

func TestPlanSyncChunks(t *testing.T) {
	var (
		pods []*api.PodSandbox
		ctrs []*api.Container
	)
	for i := range 10 {
		pods = append(pods, &api.PodSandbox{Id: "pod-" + strconv.Itoa(i), Name: strings.Repeat("p", 100)})
	}
	for i := range 100 {
		ctrs = append(ctrs, &api.Container{Id: "ctr-" + strconv.Itoa(i), Name: strings.Repeat("c", 300)})
	}

	const budget = 4096
	chunks, err := planSyncChunks(pods, ctrs, budget)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 {
		t.Fatalf("expected several chunks, got %d", len(chunks))
	}

	var gotPods []*api.PodSandbox
	var gotCtrs []*api.Container
	for i, c := range chunks {
		size := proto.Size(&api.SynchronizeRequest{Pods: c.pods, Containers: c.containers})
		if size > budget {
			t.Errorf("chunk %d is %d bytes, budget %d", i, size, budget)
		}
		if len(c.pods)+len(c.containers) == 0 {
			t.Errorf("chunk %d is empty", i)
		}
		gotPods = append(gotPods, c.pods...)
		gotCtrs = append(gotCtrs, c.containers...)
	}
	for i := range pods {
		if gotPods[i] != pods[i] {
			t.Fatalf("pod %d out of order", i)
		}
	}
	for i := range ctrs {
		if gotCtrs[i] != ctrs[i] {
			t.Fatalf("container %d out of order", i)
		}
	}
}

func TestPlanSyncChunksEmptySnapshotIsOneMessage(t *testing.T) {
	chunks, err := planSyncChunks(nil, nil, syncMessageBudget)
	if err != nil || len(chunks) != 1 {
		t.Fatalf("got %d chunks, %v", len(chunks), err)
	}
}

func TestPlanSyncChunksRejectsOversizedObject(t *testing.T) {
	ctr := &api.Container{Id: "huge", Name: strings.Repeat("x", 10000)}
	_, err := planSyncChunks(nil, []*api.Container{ctr}, 4096)
	if err == nil || !strings.Contains(err.Error(), "huge") {
		t.Fatalf("error %v, want one naming the container", err)
	}
}
