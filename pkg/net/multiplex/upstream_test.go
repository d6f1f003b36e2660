package multiplex_test

// Our Mux against upstream containerd/nri v0.12.5's, in one process: the
// multiplexer registers no protobuf types, so both may be linked here.

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"

	upmux "github.com/containerd/nri/pkg/net/multiplex"
	"github.com/containerd/ttrpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/nri-handover/nri/pkg/net/multiplex"
)

// The constants that pick the NRI session's connections must agree.
func TestConnIDsAsUpstream(t *testing.T) {
	if multiplex.PluginServiceConn != multiplex.ConnID(upmux.PluginServiceConn) ||
		multiplex.RuntimeServiceConn != multiplex.ConnID(upmux.RuntimeServiceConn) ||
		multiplex.LowestConnID != multiplex.ConnID(upmux.LowestConnID) {
		t.Fatal("connection ids differ from upstream's")
	}
}

// The same sequence of writes puts the same bytes on the trunk.
func TestSameBytesAsUpstream(t *testing.T) {
	writes := []struct {
		id  uint32
		msg []byte
	}{
		{1, []byte("register")},
		{2, nil},
		{2, bytes.Repeat([]byte{0xa5}, maxPayload+100)},
		{1, []byte("configure")},
	}
	capture := func(open func(net.Conn) func(uint32) net.Conn) []byte {
		trunk, peer := pair(t)
		got := make(chan []byte, 1)
		go func() { b, _ := io.ReadAll(peer); got <- b }()
		conn := open(trunk)
		for _, w := range writes {
			mustWrite(t, conn(w.id), w.msg)
		}
		trunk.Close()
		return <-got
	}
	ours := capture(func(trunk net.Conn) func(uint32) net.Conn {
		m := multiplex.Multiplex(trunk)
		t.Cleanup(func() { m.Close() })
		return func(id uint32) net.Conn { c, _ := m.Open(multiplex.ConnID(id)); return c }
	})
	theirs := capture(func(trunk net.Conn) func(uint32) net.Conn {
		m := upmux.Multiplex(trunk)
		t.Cleanup(func() { m.Close() })
		return func(id uint32) net.Conn { c, _ := m.Open(upmux.ConnID(id)); return c }
	})
	if !bytes.Equal(ours, theirs) {
		t.Fatalf("trunk bytes differ: ours %d bytes, upstream %d", len(ours), len(theirs))
	}
}

// Raw messages both ways, one longer than a frame.
func TestMessagesWithUpstream(t *testing.T) {
	a, b := pair(t)
	ours := multiplex.Multiplex(a, multiplex.WithBlockedRead())
	theirs := upmux.Multiplex(b, upmux.WithBlockedRead())
	defer ours.Close()
	defer theirs.Close()
	oc, _ := ours.Open(multiplex.RuntimeServiceConn)
	tc, _ := theirs.Open(upmux.RuntimeServiceConn)
	ours.Unblock()
	theirs.Unblock()

	mustWrite(t, tc, []byte("from upstream"))
	mustRead(t, oc, "from upstream")
	mustWrite(t, oc, []byte("from us"))
	mustRead(t, tc, "from us")

	big := bytes.Repeat([]byte("0123456789abcdef"), (maxPayload+4096)/16)
	go func() { _, _ = tc.Write(big) }()
	got := make([]byte, 0, len(big))
	buf := make([]byte, 64<<10)
	for len(got) < len(big) {
		n, err := oc.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, big) {
		t.Fatal("a message split over two frames arrived changed")
	}
}

// ttrpc over the two multiplexers, each end serving one connection and
// calling the other, as an NRI runtime and plugin do.
func TestTTRPCWithUpstream(t *testing.T) {
	a, b := pair(t)
	ours := multiplex.Multiplex(a, multiplex.WithBlockedRead())
	theirs := upmux.Multiplex(b, upmux.WithBlockedRead())

	serve := func(lis net.Listener, prefix string) *ttrpc.Server {
		srv, err := ttrpc.NewServer()
		if err != nil {
			t.Fatal(err)
		}
		srv.RegisterService("test.Echo", &ttrpc.ServiceDesc{Methods: map[string]ttrpc.Method{
			"Echo": func(_ context.Context, unmarshal func(any) error) (any, error) {
				req := &wrapperspb.BytesValue{}
				if err := unmarshal(req); err != nil {
					return nil, err
				}
				return wrapperspb.Bytes(append([]byte(prefix), req.Value...)), nil
			},
		}})
		go func() { _ = srv.Serve(context.Background(), lis) }()
		return srv
	}
	ourLis, _ := ours.Listen(multiplex.PluginServiceConn)
	theirLis, _ := theirs.Listen(upmux.RuntimeServiceConn)
	ourSrv := serve(ourLis, "ours:")
	theirSrv := serve(theirLis, "upstream:")
	ourConn, _ := ours.Open(multiplex.RuntimeServiceConn)
	theirConn, _ := theirs.Open(upmux.PluginServiceConn)
	ourClient := ttrpc.NewClient(ourConn)
	theirClient := ttrpc.NewClient(theirConn)
	ours.Unblock()
	theirs.Unblock()
	defer func() {
		ourClient.Close()
		theirClient.Close()
		ourSrv.Close()
		theirSrv.Close()
		ours.Close()
		theirs.Close()
	}()

	call := func(c *ttrpc.Client, payload []byte) []byte {
		t.Helper()
		resp := &wrapperspb.BytesValue{}
		if err := c.Call(context.Background(), "test.Echo", "Echo", wrapperspb.Bytes(payload), resp); err != nil {
			t.Fatal(err)
		}
		return resp.Value
	}
	if got := call(ourClient, []byte("hi")); string(got) != "upstream:hi" {
		t.Fatalf("our client got %q", got)
	}
	if got := call(theirClient, []byte("hi")); string(got) != "ours:hi" {
		t.Fatalf("upstream's client got %q", got)
	}
	large := bytes.Repeat([]byte{'z'}, 3<<20)
	if got := call(theirClient, large); len(got) != len("ours:")+len(large) {
		t.Fatalf("large reply of %d bytes", len(got))
	}
}
