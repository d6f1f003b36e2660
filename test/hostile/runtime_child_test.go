package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/api"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// runtimeSocketEnv, when set, makes this test binary the runtime process,
// listening for plugins on the socket it names.
const runtimeSocketEnv = "NRI_HOSTILE_RUNTIME_SOCKET"

// seededPod is the pod the runtime process holds from the start, so that a
// plugin's synchronization shows it was served.
const seededPod = "pod-0"

// childReply is one line the runtime process prints: "ready" first, then one
// reply per command.
type childReply struct {
	Ready       bool              `json:"ready,omitempty"`
	Err         string            `json:"err,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// runRuntimeChild is the runtime process: test/runtime on our adaptation,
// listening on socket, with seededPod. It prints a ready line, then reads
// commands from stdin, one per line ("create POD CTR": relay CreateContainer
// and print the adjusted annotations), and stops when stdin closes.
func runRuntimeChild(socket string) int {
	rt, err := testruntime.New(testruntime.WithSocketPath(socket))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rt.Seed([]*api.PodSandbox{testruntime.NewPod(seededPod)}, nil)
	if err := rt.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer rt.Stop()

	out := json.NewEncoder(os.Stdout)
	_ = out.Encode(childReply{Ready: true})
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var reply childReply
		switch f := strings.Fields(in.Text()); {
		case len(f) == 3 && f[0] == "create":
			adjust, err := rt.CreateContainer(context.Background(), testruntime.NewContainer(f[1], f[2]))
			if err != nil {
				reply.Err = err.Error()
			}
			reply.Annotations = adjust.GetAnnotations()
		default:
			reply.Err = fmt.Sprintf("unknown command %q", in.Text())
		}
		_ = out.Encode(reply)
	}
	return 0
}

// runtimeProc is the parent's handle on a runtime process.
type runtimeProc struct {
	Socket  string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies chan childReply
	stderr  *syncBuffer
	done    chan struct{}
	err     error // exit status, set before done is closed
	stop    sync.Once
}

// startRuntime starts a runtime process and waits until it accepts plugins.
// The process is stopped (stdin closed, then killed if it lingers) when the
// spec ends.
func startRuntime() *runtimeProc {
	dir, err := os.MkdirTemp("/tmp", "nrihostile") // short: unix socket paths are limited
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)

	r := &runtimeProc{
		Socket:  filepath.Join(dir, "nri.sock"),
		replies: make(chan childReply, 16),
		stderr:  &syncBuffer{},
		done:    make(chan struct{}),
	}
	r.cmd = exec.Command(os.Args[0])
	r.cmd.Env = append(os.Environ(), runtimeSocketEnv+"="+r.Socket)
	r.cmd.Stderr = r.stderr
	r.stdin, err = r.cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	stdout, err := r.cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(r.cmd.Start()).To(Succeed())

	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var reply childReply
			if err := json.Unmarshal(sc.Bytes(), &reply); err != nil {
				reply.Err = "bad reply line: " + sc.Text()
			}
			r.replies <- reply
		}
		r.err = r.cmd.Wait()
		close(r.done)
		close(r.replies)
	}()
	DeferCleanup(func() { _ = r.Stop() })

	reply := r.next()
	Expect(reply.Ready).To(BeTrue(), "runtime process not ready: %s\n%s", reply.Err, r.stderr)
	return r
}

// next returns the runtime's next reply, or fails the spec if it exits or
// stays silent.
func (r *runtimeProc) next() childReply {
	GinkgoHelper()
	select {
	case reply, ok := <-r.replies:
		Expect(ok).To(BeTrue(), r.Status)
		return reply
	case <-time.After(time.Minute):
		Fail("no reply from the runtime process within a minute:\n" + r.stderr.String())
	}
	return childReply{}
}

// CreateContainer has the runtime relay CreateContainer for a new container
// of pod and returns the merged adjustment's annotations.
func (r *runtimeProc) CreateContainer(pod, ctr string) map[string]string {
	GinkgoHelper()
	_, err := fmt.Fprintf(r.stdin, "create %s %s\n", pod, ctr)
	Expect(err).NotTo(HaveOccurred(), r.Status)
	reply := r.next()
	Expect(reply.Err).To(BeEmpty())
	return reply.Annotations
}

// Exited reports whether the runtime process has exited.
func (r *runtimeProc) Exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Status describes the process for a failure message: its exit status and
// what it wrote to stderr (a panic, say), or that it is still running. Pass
// it as a method value (rt.Status): Gomega calls it only on failure. A
// failure is often the process dying, which is not reaped at once, so it
// waits a few seconds for the exit before it says "still running".
func (r *runtimeProc) Status() string {
	select {
	case <-r.done:
		return fmt.Sprintf("the runtime process exited (%v); stderr:\n%s", r.err, r.stderr)
	case <-time.After(5 * time.Second):
		return "the runtime process is still running"
	}
}

// Stop closes stdin, on which the runtime stops its adaptation and exits 0,
// and returns the exit status. A runtime that does not exit within a minute
// is killed. Later calls only return the status.
func (r *runtimeProc) Stop() error {
	r.stop.Do(func() {
		_ = r.stdin.Close()
		select {
		case <-r.done:
		case <-time.After(time.Minute):
			_ = r.cmd.Process.Kill()
			<-r.done
			r.err = fmt.Errorf("killed: did not exit within a minute of its stdin closing: %w", r.err)
		}
	})
	return r.err
}

// syncBuffer is a bytes.Buffer safe for the exec package's copier and the
// spec reading it at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
