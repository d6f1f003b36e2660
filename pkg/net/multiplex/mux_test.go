package multiplex_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/nri-handover/nri/pkg/net/multiplex"
)

const maxPayload = 10 + 4<<20

func TestWriteFraming(t *testing.T) {
	trunk, peer := pair(t)
	m := multiplex.Multiplex(trunk)
	defer m.Close()
	c, err := m.Open(multiplex.RuntimeServiceConn)
	if err != nil {
		t.Fatal(err)
	}

	mustWrite(t, c, []byte("hello"))
	want := frame(2, []byte("hello"))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("frame bytes %x, want %x", got, want)
	}

	t.Run("an empty write is an empty frame", func(t *testing.T) {
		mustWrite(t, c, nil)
		if id, p := readFrame(t, peer); id != 2 || len(p) != 0 {
			t.Fatalf("got conn %d with %d bytes, want conn 2 with none", id, len(p))
		}
	})

	t.Run("a write longer than one frame is split", func(t *testing.T) {
		big := bytes.Repeat([]byte{'x'}, maxPayload+3)
		done := make(chan error, 1)
		go func() { _, err := c.Write(big); done <- err }()
		id1, p1 := readFrame(t, peer)
		id2, p2 := readFrame(t, peer)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if id1 != 2 || id2 != 2 || len(p1) != maxPayload || len(p2) != 3 {
			t.Fatalf("frames (%d, %d bytes), (%d, %d bytes); want (2, %d), (2, 3)", id1, len(p1), id2, len(p2), maxPayload)
		}
	})
}

func TestReadDemultiplexes(t *testing.T) {
	trunk, peer := pair(t)
	m := multiplex.Multiplex(trunk, multiplex.WithBlockedRead())
	defer m.Close()
	one, _ := m.Open(multiplex.PluginServiceConn)
	two, _ := m.Open(multiplex.RuntimeServiceConn)
	// Sent before Unblock: kept, because the connections are open by then.
	mustWrite(t, peer, frame(2, []byte("to-two")))
	mustWrite(t, peer, frame(7, []byte("to-nobody")))
	mustWrite(t, peer, frame(1, []byte("to-one")))
	mustWrite(t, peer, frame(2, []byte("again")))
	m.Unblock()

	mustRead(t, one, "to-one")
	mustRead(t, two, "to-two")
	mustRead(t, two, "again")
}

func TestReadWithSmallBuffer(t *testing.T) {
	trunk, peer := pair(t)
	m := multiplex.Multiplex(trunk)
	defer m.Close()
	c, _ := m.Open(multiplex.LowestConnID)
	mustWrite(t, peer, frame(1, []byte("abcdefgh")))
	mustWrite(t, peer, frame(1, []byte("ij")))

	buf := make([]byte, 3)
	var got []string
	for range 4 {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(buf[:n]))
	}
	if s := strings.Join(got, "|"); s != "abc|def|gh|ij" {
		t.Fatalf("reads %s, want abc|def|gh|ij (a read never spans two payloads)", s)
	}
}

func TestQueuedFramesOutliveTheTrunk(t *testing.T) {
	trunk, peer := pair(t)
	m := multiplex.Multiplex(trunk, multiplex.WithBlockedRead())
	defer m.Close()
	c, _ := m.Open(multiplex.LowestConnID)
	mustWrite(t, peer, frame(1, []byte("last")))
	mustWrite(t, peer, frame(1, []byte("words")))
	peer.Close()
	m.Unblock()

	mustRead(t, c, "last")
	mustRead(t, c, "words")
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, io.EOF) {
		t.Fatalf("read after the trunk ended: %v, want io.EOF", err)
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("write after the trunk ended succeeded")
	}
}

func TestMalformedStreamTearsDown(t *testing.T) {
	for name, tc := range map[string]struct {
		opts   []multiplex.Option
		frames [][]byte
		err    string
		queued int
	}{
		"frame longer than the maximum": {
			frames: [][]byte{frame(1, []byte("ok")), {0, 0, 0, 1, 0, 0x40, 0, 11}},
			err:    "maximum is",
			queued: 1,
		},
		"reader falls behind the queue": {
			opts:   []multiplex.Option{multiplex.WithReadQueueLength(2)},
			frames: [][]byte{frame(1, []byte("a")), frame(1, []byte("b")), frame(1, []byte("c"))},
			err:    "read queue full",
			queued: 2,
		},
	} {
		t.Run(name, func(t *testing.T) {
			trunk, peer := pair(t)
			m := multiplex.Multiplex(trunk, append(tc.opts, multiplex.WithBlockedRead())...)
			defer m.Close()
			c, _ := m.Open(multiplex.LowestConnID)
			for _, f := range tc.frames {
				mustWrite(t, peer, f)
			}
			m.Unblock()
			// The Mux closes the trunk: the peer sees the end.
			if _, err := io.ReadAll(peer); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 8)
			for range tc.queued {
				if _, err := c.Read(buf); err != nil {
					t.Fatalf("a frame queued before the failure: %v", err)
				}
			}
			if _, err := c.Read(buf); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("read error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestClose(t *testing.T) {
	trunk, peer := pair(t)
	m := multiplex.Multiplex(trunk)
	one, _ := m.Open(multiplex.PluginServiceConn)
	two, _ := m.Open(multiplex.RuntimeServiceConn)

	t.Run("closing a connection leaves the others", func(t *testing.T) {
		if err := one.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := one.Read(make([]byte, 1)); err == nil {
			t.Fatal("read on a closed connection succeeded")
		}
		mustWrite(t, peer, frame(2, []byte("still")))
		mustRead(t, two, "still")
	})

	t.Run("reopening gives a fresh connection", func(t *testing.T) {
		again, err := m.Open(multiplex.PluginServiceConn)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, peer, frame(1, []byte("new")))
		mustRead(t, again, "new")
	})

	t.Run("closing the mux ends everything", func(t *testing.T) {
		m.Close()
		if _, err := two.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("read after Close: %v, want io.EOF", err)
		}
		if _, err := two.Write([]byte("x")); err == nil {
			t.Fatal("write after Close succeeded")
		}
		if _, err := io.ReadAll(peer); err != nil {
			t.Fatalf("the trunk was not closed: %v", err)
		}
		late, err := m.Open(multiplex.LowestConnID + 5)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := late.Read(make([]byte, 1)); err == nil {
			t.Fatal("a connection opened after Close can be read")
		}
	})
}

func TestOpenReservedID(t *testing.T) {
	trunk, _ := pair(t)
	m := multiplex.Multiplex(trunk)
	defer m.Close()
	if _, err := m.Open(0); err == nil {
		t.Fatal("ConnID 0 opened")
	}
	if _, err := m.Listen(0); err == nil {
		t.Fatal("ConnID 0 listened on")
	}
}

func TestListenAndDial(t *testing.T) {
	a, b := pair(t)
	ma, mb := multiplex.Multiplex(a), multiplex.Multiplex(b)
	defer ma.Close()
	defer mb.Close()

	lis, err := ma.Listen(multiplex.PluginServiceConn)
	if err != nil {
		t.Fatal(err)
	}
	dialed, err := mb.Dialer(multiplex.PluginServiceConn)("mux", "")
	if err != nil {
		t.Fatal(err)
	}
	accepted, err := lis.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if accepted.LocalAddr() == nil || lis.Addr().String() != accepted.LocalAddr().String() {
		t.Fatalf("listener address %v, connection address %v", lis.Addr(), accepted.LocalAddr())
	}
	mustWrite(t, dialed, []byte("ping"))
	mustRead(t, accepted, "ping")

	second := make(chan error, 1)
	go func() { _, err := lis.Accept(); second <- err }()
	lis.Close()
	if err := <-second; !errors.Is(err, io.EOF) {
		t.Fatalf("second Accept: %v, want io.EOF after Close", err)
	}
}

// A Read takes as much of a frame as its buffer can, whatever the size of
// the pieces the frame was received in (readPayload's 64 KiB and up), and
// never bytes of the next frame: upstream's multiplex suite reads a 3-frame
// message with one Read per frame.
func TestReadReturnsWholeFrames(t *testing.T) {
	a, b := pair(t)
	ma, mb := multiplex.Multiplex(a), multiplex.Multiplex(b)
	defer ma.Close()
	defer mb.Close()
	w, _ := ma.Open(multiplex.LowestConnID)
	r, _ := mb.Open(multiplex.LowestConnID)

	msg := make([]byte, 2*maxPayload+5)
	for i := range msg {
		msg[i] = byte(i % 251)
	}
	small := bytes.Repeat([]byte("s"), 200_000)
	done := make(chan error, 1)
	go func() {
		_, err := w.Write(msg)
		if err == nil {
			_, err = w.Write(small)
		}
		done <- err
	}()

	buf := make([]byte, len(msg))
	var sizes []int
	got := 0
	for got < len(msg) {
		n, err := r.Read(buf[got:])
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
		got += n
	}
	if want := []int{maxPayload, maxPayload, 5}; !slices.Equal(sizes, want) {
		t.Fatalf("reads of %v bytes, want one per frame: %v", sizes, want)
	}
	if !bytes.Equal(buf, msg) {
		t.Fatal("message corrupted")
	}

	sizes = sizes[:0]
	var rcv []byte
	part := make([]byte, 90_000) // ends inside readPayload's pieces
	for len(rcv) < len(small) {
		n, err := r.Read(part)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
		rcv = append(rcv, part[:n]...)
	}
	if want := []int{90_000, 90_000, 20_000}; !slices.Equal(sizes, want) || !bytes.Equal(rcv, small) {
		t.Fatalf("reads of %v bytes (equal %v), want %v", sizes, bytes.Equal(rcv, small), want)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
