//go:build linux

package adaptation

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// socketPair returns both ends of a connected unix stream socket.
func socketPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]net.Conn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	return conns[0], conns[1]
}

// stalledWrite writes more than the socket buffers hold to a peer that does
// not read, and returns the write's result.
func stalledWrite(c net.Conn) (int, error) {
	return c.Write(make([]byte, 16<<20))
}

func TestDeadlineConnClosesOnStalledWrite(t *testing.T) {
	local, peer := socketPair(t)
	c := newDeadlineConn(local, func() time.Duration { return 50 * time.Millisecond })

	done := make(chan error, 1)
	go func() {
		_, err := stalledWrite(c)
		done <- err
	}()
	err := receive(t, done, "the stalled write to time out")
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write error %v, want a timeout", err)
	}

	// The connection is closed: the peer reads what got through, then EOF.
	if _, err := io.Copy(io.Discard, peer); err != nil {
		t.Fatalf("peer read: %v, want EOF", err)
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("write after the timeout succeeded")
	}
}

// A connection the plugin keeps idle is never timed out: only writes carry a
// deadline.
func TestDeadlineConnLeavesReadsUnbounded(t *testing.T) {
	const timeout = 20 * time.Millisecond
	limit := func() time.Duration { return timeout }
	idle, idlePeer := socketPair(t)
	c := newDeadlineConn(idle, limit)

	read := make(chan error, 1)
	go func() {
		buf := make([]byte, 5)
		_, err := io.ReadFull(c, buf)
		if err == nil && string(buf) != "hello" {
			err = errors.New("read " + string(buf))
		}
		read <- err
	}()
	if _, err := c.Write([]byte("ping")); err != nil { // sets a write deadline
		t.Fatal(err)
	}

	// Let that deadline pass, measured by a write that started later with the
	// same timeout and timed out.
	stalled, _ := socketPair(t)
	if _, err := stalledWrite(newDeadlineConn(stalled, limit)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("stalled write: %v, want a timeout", err)
	}

	if _, err := idlePeer.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := receive(t, read, "the pending read"); err != nil {
		t.Fatalf("read on an idle connection: %v", err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(idlePeer, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("peer read %q, %v", buf, err)
	}
	if _, err := c.Write([]byte("again")); err != nil {
		t.Fatalf("write on an idle connection: %v", err)
	}
}

func TestDeadlineConnKeepsPeerCredentials(t *testing.T) {
	local, _ := socketPair(t)
	cred, err := peerCredentials(newDeadlineConn(local, getRequestTimeout))
	if err != nil || cred.PID != os.Getpid() || cred.UID != os.Getuid() || cred.GID != os.Getgid() {
		t.Fatalf("peer credentials %s, %v; want pid %d uid %d gid %d", cred, err, os.Getpid(), os.Getuid(), os.Getgid())
	}
}
