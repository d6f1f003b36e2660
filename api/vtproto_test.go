package api

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// vtMessage is the vtprotobuf codec upstream's messages carry (its
// api_vtproto.pb.go); code written for upstream may call it on ours.
type vtMessage interface {
	proto.Message
	MarshalVT() ([]byte, error)
	MarshalToVT([]byte) (int, error)
	MarshalToSizedBufferVT([]byte) (int, error)
	SizeVT() int
	UnmarshalVT([]byte) error
}

// TestVTProtoEveryMessage fills every field of every message of our proto
// (handover's included) and checks that the vtprotobuf codec and
// google.golang.org/protobuf, which ttrpc uses, agree on the wire.
func TestVTProtoEveryMessage(t *testing.T) {
	msgs := File_api_proto.Messages()
	if msgs.Len() == 0 {
		t.Fatal("api.proto has no messages")
	}
	for i := range msgs.Len() {
		name := msgs.Get(i).FullName()
		t.Run(string(name.Name()), func(t *testing.T) {
			mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
			if err != nil {
				t.Fatalf("finding %s: %v", name, err)
			}
			m, ok := mt.New().Interface().(vtMessage)
			if !ok {
				t.Fatalf("%s has no vtprotobuf methods", name)
			}
			checkWire(t, m)
			fill(m.ProtoReflect(), 3)
			checkWire(t, m)
		})
	}
}

// TestVTProtoHandoverMessages spells out the handover's additions to
// upstream's messages, so that a failure reads as a concrete message.
func TestVTProtoHandoverMessages(t *testing.T) {
	for _, m := range []vtMessage{
		&RegisterPluginRequest{PluginName: "p", PluginIdx: "10", NRIVersion: "v0.12.5",
			PluginVersion: "v2", InstanceId: "i-2", Generation: 7, Features: []string{"handover"}},
		&RegisterPluginResponse{NRIVersion: "v0.12.5", Features: []string{"handover", "delta-sync"}},
		&SynchronizeRequest{
			Pods:       []*PodSandbox{{Id: "pod", Labels: map[string]string{"app": "x"}}},
			Containers: []*Container{{Id: "ctr", PodSandboxId: "pod", State: ContainerState_CONTAINER_RUNNING}},
			Takeover: &Takeover{PredecessorVersion: "v1", PredecessorInstance: "i-1", PredecessorGeneration: 6,
				Reactivation: true, PredecessorPod: &PodIdentity{Namespace: "kube-system", Name: "nri-0",
					Uid: "u-1", TemplateGeneration: 3}},
			Delta: true, RemovedPods: []string{"gone"}, RemovedContainers: []string{"gone-ctr"},
		},
		&ShutdownRequest{Reason: ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, Message: "handover",
			SuccessorVersion: "v2", SuccessorInstance: "i-2", SuccessorGeneration: 7},
		&RoleChangeRequest{Role: PluginRole_PLUGIN_ROLE_STANDBY, PeerVersion: "v2", PeerInstance: "i-2",
			PeerGeneration: 7, Message: "standby"},
		&CreateContainerResponse{Adjust: &ContainerAdjustment{
			Annotations: map[string]string{"a": "b"},
			Linux: &LinuxContainerAdjustment{Resources: &LinuxResources{
				Memory: &LinuxMemory{Limit: &OptionalInt64{Value: -1}},
			}},
		}},
	} {
		t.Run(string(m.ProtoReflect().Descriptor().Name()), func(t *testing.T) { checkWire(t, m) })
	}
}

// TestVTProtoRejectsMalformed: the vtprotobuf decoder fails where
// google.golang.org/protobuf does, with its own error values.
func TestVTProtoRejectsMalformed(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		// Unknown field 1, length-delimited, of length 2^63: negative as int.
		{"negative length", []byte{0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, ErrInvalidLength},
		{"truncated string", []byte{0x0a, 0x05, 'a'}, io.ErrUnexpectedEOF},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := (&RegisterPluginResponse{}).UnmarshalVT(c.data); !errors.Is(err, c.want) {
				t.Errorf("UnmarshalVT: %v, want %v", err, c.want)
			}
			if err := proto.Unmarshal(c.data, &RegisterPluginResponse{}); err == nil {
				t.Error("proto.Unmarshal accepted it")
			}
		})
	}
}

// checkWire requires each codec to decode the other's bytes into a message
// equal to m, and both to produce the same bytes (fill sets one map entry at
// most, so the order of map entries cannot differ).
func checkWire(t *testing.T, m vtMessage) {
	t.Helper()
	vt, err := m.MarshalVT()
	if err != nil {
		t.Fatalf("MarshalVT: %v", err)
	}
	pb, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatalf("proto.Marshal: %v", err)
	}
	if !bytes.Equal(vt, pb) {
		t.Errorf("MarshalVT and proto.Marshal differ:\n%x\n%x", vt, pb)
	}
	if m.SizeVT() != len(vt) || proto.Size(m) != len(vt) {
		t.Errorf("SizeVT %d, proto.Size %d, MarshalVT wrote %d bytes", m.SizeVT(), proto.Size(m), len(vt))
	}
	buf := make([]byte, m.SizeVT())
	if n, err := m.MarshalToVT(buf); err != nil || n != len(vt) || !bytes.Equal(buf, vt) {
		t.Errorf("MarshalToVT: %d bytes, %v; differs from MarshalVT", n, err)
	}

	fromVT := m.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(vt, fromVT); err != nil {
		t.Fatalf("proto.Unmarshal of MarshalVT's bytes: %v", err)
	}
	if !proto.Equal(fromVT, m) {
		t.Errorf("proto.Unmarshal of MarshalVT's bytes: %v, want %v", fromVT, m)
	}
	fromPB := m.ProtoReflect().New().Interface().(vtMessage)
	if err := fromPB.UnmarshalVT(pb); err != nil {
		t.Fatalf("UnmarshalVT of proto.Marshal's bytes: %v", err)
	}
	if !proto.Equal(fromPB, m) {
		t.Errorf("UnmarshalVT of proto.Marshal's bytes: %v, want %v", fromPB, m)
	}
}

// fill sets every field of m to a value that is not the zero value (lists
// get two elements, maps one entry), nested messages down to depth levels.
func fill(m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			mp.Set(scalar(fd.MapKey()).MapKey(), element(fd.MapValue(), mp.NewValue, depth))
		case fd.IsList():
			l := m.Mutable(fd).List()
			l.Append(element(fd, l.NewElement, depth))
			l.Append(element(fd, l.NewElement, depth))
		case fd.Message() != nil && depth == 0:
		default:
			m.Set(fd, element(fd, func() protoreflect.Value { return m.NewField(fd) }, depth))
		}
	}
}

func element(fd protoreflect.FieldDescriptor, newValue func() protoreflect.Value, depth int) protoreflect.Value {
	if fd.Message() == nil {
		return scalar(fd)
	}
	v := newValue()
	if depth > 0 {
		fill(v.Message(), depth-1)
	}
	return v
}

// scalar is a non-zero value of fd's kind; signed integers are negative,
// which vtprotobuf and protobuf must encode alike (ten-byte varints).
func scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	n := int64(fd.Number())
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		return protoreflect.ValueOfEnum(values.Get(values.Len() - 1).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(-n))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(n))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(-1<<40 - n)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(1<<40 + uint64(n))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(1.5)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(-2.25)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(string(fd.Name()))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(fd.Name()))
	}
	panic("unexpected field kind " + fd.Kind().String())
}
