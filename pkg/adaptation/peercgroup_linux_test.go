//go:build linux

package adaptation

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestPeerCgroupHelperProcess(t *testing.T) {
	sock := os.Getenv("NRI_IDENT_TEST_SOCK")
	if sock == "" {
		t.Skip("helper process only")
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		os.Exit(2)
	}
	c.Write([]byte{1})
	os.Exit(0) // exits while the runtime side still holds the connection
}

// TestPeerCgroupExitedPeer: a peer that exits between accept and lookup
// (its pid free for reuse) is refused, never attributed.
func TestPeerCgroupExitedPeer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeerCgroupHelperProcess$")
	cmd.Env = append(os.Environ(), "NRI_IDENT_TEST_SOCK="+sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	buf := make([]byte, 1)
	conn.Read(buf)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if cg, err := peerCgroup(conn); err == nil {
		t.Fatalf("exited peer %d attributed to cgroup %q", cmd.Process.Pid, cg)
	}
}

// TestPeerCgroupLivePeer: a live peer's cgroup is its own.
func TestPeerCgroupLivePeer(t *testing.T) {
	a, b, err := unixPair(t)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	cg, err := peerCgroup(a)
	if err != nil {
		t.Skipf("SO_PEERPIDFD unavailable: %v", err)
	}
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(os.Getpid()) + "/cgroup")
	want, _ := parseProcCgroup(string(data))
	if cg != want {
		t.Fatalf("cgroup %q, want %q", cg, want)
	}
}

func unixPair(t *testing.T) (net.Conn, net.Conn, error) {
	sock := filepath.Join(t.TempDir(), "p")
	l, err := net.Listen("unix", sock)
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	b, err := net.Dial("unix", sock)
	if err != nil {
		return nil, nil, err
	}
	a, err := l.Accept()
	return a, b, err
}
