package net_test

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	nrinet "github.com/nri-handover/nri/pkg/net"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSocketPair(t *testing.T) {
	sp, err := nrinet.NewSocketPair()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []*os.File{sp.LocalFile(), sp.PeerFile()} {
		flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
		if err != nil {
			t.Fatal(err)
		}
		if flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("%s is inherited by every child (no FD_CLOEXEC)", f.Name())
		}
	}
	local, err := sp.LocalConn()
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	// The peer end as a plugin gets it: an inherited descriptor number.
	fd, err := syscall.Dup(int(sp.PeerFile().Fd()))
	if err != nil {
		t.Fatal(err)
	}
	sp.PeerClose()
	peer, err := nrinet.NewFdConn(fd)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	if _, err := local.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("peer read %q, %v", buf, err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
		t.Error("NewFdConn left the inherited descriptor open")
	}
}

func TestNewFdConnRejectsNonSocket(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "plain")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if _, err := nrinet.NewFdConn(fd); err == nil {
		t.Fatal("a regular file became a net.Conn")
	}
}

func TestConnListener(t *testing.T) {
	sp, err := nrinet.NewSocketPair()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sp.LocalConn()
	if err != nil {
		t.Fatal(err)
	}
	peer, err := sp.PeerConn()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()

	lis := nrinet.NewConnListener(conn)
	if lis.Addr() != conn.LocalAddr() {
		t.Errorf("listener address %v, connection's %v", lis.Addr(), conn.LocalAddr())
	}
	got, err := lis.Accept()
	if err != nil || got != conn {
		t.Fatalf("first Accept: %v, %v", got, err)
	}
	next := make(chan error, 1)
	go func() { _, err := lis.Accept(); next <- err }()
	if err := lis.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-next; !errors.Is(err, io.EOF) {
		t.Fatalf("second Accept after Close: %v, want io.EOF", err)
	}
	if err := lis.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// Close closed the wrapped connection: the peer reads the end.
	if _, err := peer.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("peer read %v, want io.EOF", err)
	}
}
