package wire

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/nri-handover/nri/api"
)

// The field numbers proto/api.proto reserves for what we add to upstream's
// messages, far above any number upstream will reach counting up from 1.
const (
	firstAddition protoreflect.FieldNumber = 1000
	lastAddition  protoreflect.FieldNumber = 1099
)

// upstreamAPI is upstream's api.proto as compiled into the upstream peer.
func upstreamAPI() protoreflect.FileDescriptor {
	var fdp descriptorpb.FileDescriptorProto
	ExpectWithOffset(1, protojson.Unmarshal(runPeer(nil, "describe"), &fdp)).To(Succeed())
	file, err := protodesc.NewFile(&fdp, nil)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return file
}

// eachMessage calls fn for every message of msgs, nested ones included.
func eachMessage(msgs protoreflect.MessageDescriptors, fn func(protoreflect.MessageDescriptor)) {
	for i := 0; i < msgs.Len(); i++ {
		fn(msgs.Get(i))
		eachMessage(msgs.Get(i).Messages(), fn)
	}
}

// additionsOutsideRange lists the fields of ours that upstream's message does
// not have and that are numbered outside the reserved range.
func additionsOutsideRange(upstream, ours protoreflect.MessageDescriptor) []string {
	var stray []string
	for i := 0; i < ours.Fields().Len(); i++ {
		f := ours.Fields().Get(i)
		if upstream.Fields().ByNumber(f.Number()) == nil && (f.Number() < firstAddition || f.Number() > lastAddition) {
			stray = append(stray, string(f.FullName()))
		}
	}
	return stray
}

// onlyAdditions returns a copy of msg with every field upstream's message of
// the same wire position knows cleared: what is left is ours alone.
func onlyAdditions(msg proto.Message, upstream protoreflect.MessageDescriptor) proto.Message {
	mine := proto.Clone(msg)
	mine.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		if upstream.Fields().ByNumber(fd.Number()) != nil {
			mine.ProtoReflect().Clear(fd)
		}
		return true
	})
	return mine
}

var _ = Describe("the field numbers of our additions, against upstream v0.12.5 as compiled", func() {
	var upstream protoreflect.FileDescriptor
	BeforeEach(func() { upstream = upstreamAPI() })

	It("keeps every upstream field's number and numbers each field we add to an upstream message in 1000-1099", func() {
		var missing, stray, checked []string
		eachMessage(upstream.Messages(), func(up protoreflect.MessageDescriptor) {
			checked = append(checked, string(up.Name()))
			// Our api package, linked into this test, registers the same names.
			found, _ := protoregistry.GlobalFiles.FindDescriptorByName(up.FullName())
			d, ok := found.(protoreflect.MessageDescriptor)
			if !ok {
				missing = append(missing, string(up.FullName()))
				return
			}
			for i := 0; i < up.Fields().Len(); i++ {
				uf := up.Fields().Get(i)
				if of := d.Fields().ByNumber(uf.Number()); of == nil || of.Name() != uf.Name() {
					missing = append(missing, string(uf.FullName()))
				}
			}
			stray = append(stray, additionsOutsideRange(up, d)...)
		})
		// An empty or truncated description from the peer must not pass as
		// "nothing missing": the messages the handover extends were checked.
		Expect(checked).To(ContainElements("RegisterPluginRequest", "ConfigureRequest", "SynchronizeRequest",
			"Empty", "CreateContainerRequest", "ContainerAdjustment", "PodSandbox", "Container"))
		Expect(missing).To(BeEmpty(), "upstream fields or messages we do not carry under upstream's number")
		Expect(stray).To(BeEmpty(), "fields added to upstream messages outside the reserved range")
	})

	It("numbers the fields of the messages that stand where upstream sends Empty in 1000-1099", func() {
		var replaced, stray []string
		services := upstream.Services()
		for i := 0; i < services.Len(); i++ {
			up := services.Get(i)
			ours := api.File_api_proto.Services().ByName(up.Name())
			Expect(ours).NotTo(BeNil(), "service %s", up.FullName())
			for j := 0; j < up.Methods().Len(); j++ {
				um := up.Methods().Get(j)
				om := ours.Methods().ByName(um.Name())
				Expect(om).NotTo(BeNil(), "method %s", um.FullName())
				for _, pair := range [][2]protoreflect.MessageDescriptor{{um.Input(), om.Input()}, {um.Output(), om.Output()}} {
					if pair[0].FullName() != pair[1].FullName() {
						replaced = append(replaced, string(pair[1].Name()))
						stray = append(stray, additionsOutsideRange(pair[0], pair[1])...)
					}
				}
			}
		}
		Expect(replaced).To(ConsistOf("RegisterPluginResponse", "ShutdownRequest"))
		Expect(stray).To(BeEmpty())
	})

	DescribeTable("an upstream peer keeps a message that holds only our additions as unknown bytes, none read as its own field",
		func(ours proto.Message, upstreamType string) {
			d := upstream.Messages().ByName(protoreflect.Name(upstreamType))
			Expect(d).NotTo(BeNil())
			mine := onlyAdditions(ours, d)
			Expect(populated(mine)).NotTo(BeEmpty(), "the fixture carries none of our additions")

			view := upstreamDecodes(mine, upstreamType)

			Expect(view.Message).To(MatchJSON(`{}`))
			Expect(view.UnknownBytes).To(Equal(proto.Size(mine)))
		},
		Entry("RegisterPluginRequest", handoverRegistration(), "RegisterPluginRequest"),
		Entry("ConfigureRequest", featuredConfigure(), "ConfigureRequest"),
		Entry("SynchronizeRequest of a takeover", takeoverSync(), "SynchronizeRequest"),
		Entry("SynchronizeRequest carrying a delta", deltaSync(), "SynchronizeRequest"),
		Entry("RegisterPluginResponse as Empty",
			&api.RegisterPluginResponse{NRIVersion: ourNRIVersion, Features: []string{api.FeatureHandover}}, "Empty"),
		Entry("ShutdownRequest as Empty", &api.ShutdownRequest{
			Reason:              api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED,
			Message:             "replaced",
			SuccessorVersion:    "1.4.2",
			SuccessorInstance:   "new-pod-uid",
			SuccessorGeneration: 8,
		}, "Empty"),
	)
})
