package handover_test

import (
	"context"
	"sync"

	"github.com/containerd/ttrpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/test/plugins/record"
)

// wireTrace is the runtime's side of the record: a ttrpc client interceptor
// installed through adaptation.WithTTRPCOptions sees every request the
// adaptation sends to each plugin connection, before it leaves. It tells
// which connection each event was dispatched to, whether the plugin answered,
// and what the runtime said in Shutdown and RoleChange, without any hook
// inside the adaptation.
type wireTrace struct {
	mu    sync.Mutex
	conns int
	tick  uint64 // orders the beginnings and ends of all calls
	sends []wireSend
}

// wireSend is one request to one plugin connection.
type wireSend struct {
	Conn   int    // connection number, 1 for the first connection, in connect order
	Method string // "CreateContainer", "Synchronize", "Shutdown", ...
	Seq    uint64 // the test runtime's sequence number, for events
	Detail string // the reason of a Shutdown, the role of a RoleChange
	Err    error  // what the call returned
	Done   bool   // the call returned
	// Begin and End order the call's start and return among all starts and
	// returns of the trace (End is 0 while the call is in flight).
	Begin, End uint64
}

func newWireTrace() *wireTrace { return &wireTrace{} }

// option installs the trace in an adaptation.
func (t *wireTrace) option() adaptation.Option {
	return adaptation.WithTTRPCOptions([]ttrpc.ClientOpts{t.clientOpt}, nil)
}

// clientOpt numbers each new connection and intercepts its calls.
func (t *wireTrace) clientOpt(c *ttrpc.Client) {
	t.mu.Lock()
	t.conns++
	conn := t.conns
	t.mu.Unlock()
	ttrpc.WithChainUnaryClientInterceptor(func(ctx context.Context, req *ttrpc.Request, resp *ttrpc.Response,
		_ *ttrpc.UnaryClientInfo, invoke ttrpc.Invoker) error {
		i := t.begin(conn, req)
		err := invoke(ctx, req, resp)
		t.end(i, err)
		return err
	})(c)
}

func (t *wireTrace) begin(conn int, req *ttrpc.Request) int {
	s := wireSend{Conn: conn, Method: req.Method}
	if m := decodeRequest(req); m != nil {
		s.Seq, s.Detail = describeRequest(m)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tick++
	s.Begin = t.tick
	t.sends = append(t.sends, s)
	return len(t.sends) - 1
}

func (t *wireTrace) end(i int, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tick++
	t.sends[i].Err, t.sends[i].Done, t.sends[i].End = err, true, t.tick
}

// Sends returns a copy of everything sent so far, in send order.
func (t *wireTrace) Sends() []wireSend {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]wireSend(nil), t.sends...)
}

// decodeRequest unmarshals a request of the plugin service by looking its
// input type up in the protobuf registry.
func decodeRequest(req *ttrpc.Request) proto.Message {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(req.Service))
	if err != nil {
		return nil
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil
	}
	md := sd.Methods().ByName(protoreflect.Name(req.Method))
	if md == nil {
		return nil
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
	if err != nil {
		return nil
	}
	m := mt.New().Interface()
	if proto.Unmarshal(req.Payload, m) != nil {
		return nil
	}
	return m
}

// describeRequest extracts the sequence number stamped by the test runtime
// from an event, or the reason or role of a Shutdown or RoleChange.
func describeRequest(m proto.Message) (uint64, string) {
	switch r := m.(type) {
	case *api.ShutdownRequest:
		return 0, r.GetReason().String()
	case *api.RoleChangeRequest:
		return 0, r.GetRole().String()
	case *api.StateChangeEvent:
		return seqOf(r.GetPod(), r.GetContainer()), ""
	}
	type withCtr interface{ GetContainer() *api.Container }
	type withPod interface{ GetPod() *api.PodSandbox }
	var pod *api.PodSandbox
	var ctr *api.Container
	if w, ok := m.(withPod); ok {
		pod = w.GetPod()
	}
	if w, ok := m.(withCtr); ok {
		ctr = w.GetContainer()
	}
	return seqOf(pod, ctr), ""
}

func seqOf(pod *api.PodSandbox, ctr *api.Container) uint64 {
	if ctr != nil {
		if s := record.SeqOf(ctr.GetAnnotations()); s != 0 {
			return s
		}
	}
	return record.SeqOf(pod.GetAnnotations())
}
