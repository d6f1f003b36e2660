package wire

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/nri-handover/nri/api"
)

const ourNRIVersion = "v0.1.0"

func handoverRegistration() *api.RegisterPluginRequest {
	return &api.RegisterPluginRequest{
		PluginName:    "topology",
		PluginIdx:     "10",
		NRIVersion:    ourNRIVersion,
		PluginVersion: "1.4.2",
		InstanceId:    "6f0c1e2a-pod-uid",
		Generation:    7,
		Features:      []string{api.FeatureHandover},
	}
}

func takeoverSync() *api.SynchronizeRequest {
	return &api.SynchronizeRequest{
		Pods:       []*api.PodSandbox{samplePod()},
		Containers: []*api.Container{sampleContainer()},
		More:       true,
		Takeover: &api.Takeover{
			PredecessorVersion:    "1.4.1",
			PredecessorInstance:   "old-pod-uid",
			PredecessorGeneration: 6,
		},
	}
}

func deltaSync() *api.SynchronizeRequest {
	return &api.SynchronizeRequest{
		Containers:        []*api.Container{sampleContainer()},
		Delta:             true,
		RemovedPods:       []string{"pod-0"},
		RemovedContainers: []string{"ctr-0"},
		Takeover:          &api.Takeover{Reactivation: true},
	}
}

func featuredConfigure() *api.ConfigureRequest {
	return &api.ConfigureRequest{
		Config:              "mode: strict\n",
		RuntimeName:         "nri-handover-test",
		RuntimeVersion:      "0.0.1",
		RegistrationTimeout: 5000,
		RequestTimeout:      2000,
		NRIVersion:          ourNRIVersion,
		Features:            []string{api.FeatureHandover},
	}
}

// upstreamFieldsOf returns a copy of msg with the given fields (our
// additions) cleared: what an upstream peer is expected to understand of it.
func upstreamFieldsOf(msg proto.Message, additions ...protoreflect.Name) proto.Message {
	view := proto.Clone(msg)
	fields := view.ProtoReflect().Descriptor().Fields()
	for _, name := range additions {
		fd := fields.ByName(name)
		Expect(fd).NotTo(BeNil(), "no field %s in %s", name, view.ProtoReflect().Descriptor().FullName())
		view.ProtoReflect().Clear(fd)
	}
	return view
}

func expectProtoEqual(got, want proto.Message) {
	ExpectWithOffset(1, proto.Equal(got, want)).To(BeTrue(), "got  %v\nwant %v", got, want)
}

// populated names the fields of msg that hold a non-zero value.
func populated(msg proto.Message) []string {
	var names []string
	msg.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		names = append(names, string(fd.Name()))
		return true
	})
	return names
}

var _ = Describe("an upstream v0.12.5 peer decoding our messages", func() {
	DescribeTable("understands every upstream field and keeps our additions as unknown fields",
		func(ours proto.Message, upstreamType string, understood proto.Message, carriesAdditions bool) {
			view := upstreamDecodes(ours, upstreamType)

			Expect(view.Message).To(MatchJSON(protoJSON(understood)))
			if carriesAdditions {
				Expect(view.UnknownBytes).To(BeNumerically(">", 0), "our additions were dropped, not skipped")
			} else {
				Expect(view.UnknownBytes).To(BeZero(), "upstream does not know a field it should")
			}

			// A peer that re-encodes what it got still carries our additions.
			back := ours.ProtoReflect().New().Interface()
			Expect(proto.Unmarshal(b64decode(view.Reencoded), back)).To(Succeed())
			expectProtoEqual(back, ours)
		},
		Entry("RegisterPluginRequest with version, instance, generation and features",
			handoverRegistration(), "RegisterPluginRequest",
			upstreamFieldsOf(handoverRegistration(), "plugin_version", "instance_id", "generation", "features"), true),
		Entry("RegisterPluginRequest without handover fields",
			&api.RegisterPluginRequest{PluginName: "plain", PluginIdx: "90", NRIVersion: ourNRIVersion},
			"RegisterPluginRequest",
			&api.RegisterPluginRequest{PluginName: "plain", PluginIdx: "90", NRIVersion: ourNRIVersion}, false),
		Entry("RegisterPluginResponse, read as the Empty reply upstream expects",
			&api.RegisterPluginResponse{NRIVersion: ourNRIVersion, Features: []string{api.FeatureHandover}},
			"Empty", &api.Empty{}, true),
		Entry("ShutdownRequest superseded by a successor, read as Empty",
			&api.ShutdownRequest{
				Reason:              api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED,
				Message:             "replaced by a newer instance",
				SuccessorVersion:    "1.4.2",
				SuccessorInstance:   "new-pod-uid",
				SuccessorGeneration: 8,
			},
			"Empty", &api.Empty{}, true),
		Entry("ShutdownRequest of a runtime shutting down, read as Empty",
			&api.ShutdownRequest{Reason: api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN},
			"Empty", &api.Empty{}, true),
		Entry("ConfigureRequest advertising features",
			featuredConfigure(), "ConfigureRequest", upstreamFieldsOf(featuredConfigure(), "features"), true),
		Entry("SynchronizeRequest of a takeover",
			takeoverSync(), "SynchronizeRequest", upstreamFieldsOf(takeoverSync(), "takeover"), true),
		Entry("SynchronizeRequest carrying a delta",
			deltaSync(), "SynchronizeRequest",
			upstreamFieldsOf(deltaSync(), "takeover", "delta", "removed_pods", "removed_containers"), true),
		Entry("CreateContainerRequest (shared message)",
			&api.CreateContainerRequest{Pod: samplePod(), Container: sampleContainer()}, "CreateContainerRequest",
			&api.CreateContainerRequest{Pod: samplePod(), Container: sampleContainer()}, false),
		Entry("CreateContainerResponse (shared message)",
			&api.CreateContainerResponse{
				Adjust: sampleAdjustment(),
				Update: []*api.ContainerUpdate{{ContainerId: "ctr-2", Linux: &api.LinuxContainerUpdate{Resources: sampleResources()}}},
				Evict:  []*api.ContainerEviction{{ContainerId: "ctr-3", Reason: "too greedy"}},
			},
			"CreateContainerResponse",
			&api.CreateContainerResponse{
				Adjust: sampleAdjustment(),
				Update: []*api.ContainerUpdate{{ContainerId: "ctr-2", Linux: &api.LinuxContainerUpdate{Resources: sampleResources()}}},
				Evict:  []*api.ContainerEviction{{ContainerId: "ctr-3", Reason: "too greedy"}},
			}, false),
	)
})

var _ = Describe("our API decoding what an upstream v0.12.5 peer encodes", func() {
	It("reads upstream's Empty RegisterPlugin reply as a RegisterPluginResponse with every field zero", func() {
		raw := upstreamEncodes("Empty", &api.Empty{})

		var resp api.RegisterPluginResponse
		Expect(proto.Unmarshal(raw, &resp)).To(Succeed())
		Expect(populated(&resp)).To(BeEmpty())
		Expect(resp.GetNRIVersion()).To(BeEmpty(), "an empty NRI_version is how a plugin spots an old runtime")
		Expect(resp.GetFeatures()).To(BeEmpty())
	})

	DescribeTable("decodes upstream's encoding with our additions left zero",
		func(upstreamType string, sent proto.Message, into proto.Message, want proto.Message) {
			raw := upstreamEncodes(upstreamType, sent)
			Expect(proto.Unmarshal(raw, into)).To(Succeed())
			expectProtoEqual(into, want)
		},
		Entry("Empty Shutdown request as ShutdownRequest{reason: unspecified}",
			"Empty", &api.Empty{}, &api.ShutdownRequest{}, &api.ShutdownRequest{}),
		Entry("RegisterPluginRequest of an upstream plugin",
			"RegisterPluginRequest",
			&api.RegisterPluginRequest{PluginName: "legacy", PluginIdx: "50", NRIVersion: "v0.12.5"},
			&api.RegisterPluginRequest{},
			&api.RegisterPluginRequest{PluginName: "legacy", PluginIdx: "50", NRIVersion: "v0.12.5"}),
		Entry("ConfigureRequest of an upstream runtime (no features)",
			"ConfigureRequest", upstreamFieldsOf(featuredConfigure(), "features"),
			&api.ConfigureRequest{}, upstreamFieldsOf(featuredConfigure(), "features")),
		Entry("SynchronizeRequest of an upstream runtime (no takeover)",
			"SynchronizeRequest", upstreamFieldsOf(takeoverSync(), "takeover"),
			&api.SynchronizeRequest{}, upstreamFieldsOf(takeoverSync(), "takeover")),
		Entry("CreateContainerResponse of an upstream plugin",
			"CreateContainerResponse", &api.CreateContainerResponse{Adjust: sampleAdjustment()},
			&api.CreateContainerResponse{}, &api.CreateContainerResponse{Adjust: sampleAdjustment()}),
		Entry("UpdateContainersRequest of an upstream plugin",
			"UpdateContainersRequest",
			&api.UpdateContainersRequest{Update: []*api.ContainerUpdate{{ContainerId: "ctr-1", IgnoreFailure: true,
				Linux: &api.LinuxContainerUpdate{Resources: sampleResources()}}}},
			&api.UpdateContainersRequest{},
			&api.UpdateContainersRequest{Update: []*api.ContainerUpdate{{ContainerId: "ctr-1", IgnoreFailure: true,
				Linux: &api.LinuxContainerUpdate{Resources: sampleResources()}}}}),
	)
})
