package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// UpstreamReply is one reply line of the upstream runtime binary.
type UpstreamReply struct {
	OK     bool            `json:"ok"`
	Err    string          `json:"err,omitempty"`
	Ready  string          `json:"ready,omitempty"`
	Adjust json.RawMessage `json:"adjust,omitempty"`
}

// UpstreamRuntime drives test/upstream/runtime over stdin/stdout.
type UpstreamRuntime struct {
	*Proc
	Socket  string
	in      io.WriteCloser
	replies chan UpstreamReply
	// Wait bounds how long Do waits for a reply (a hung binary must fail the
	// spec, not hang the suite).
	Wait time.Duration
}

// StartUpstreamRuntime starts the binary listening on socket, holding pods
// pods with ctrsPerPod containers each, and waits until it is ready.
func (b *Binaries) StartUpstreamRuntime(socket string, pods, ctrsPerPod int, stderr io.Writer) (*UpstreamRuntime, error) {
	return b.StartUpstreamRuntimeWith(UpstreamRuntimeSpec{Socket: socket, Pods: pods, CtrsPerPod: ctrsPerPod}, stderr)
}

// UpstreamRuntimeSpec configures the upstream runtime binary.
type UpstreamRuntimeSpec struct {
	Socket     string
	Pods       int // seeded pods
	CtrsPerPod int // seeded containers per pod
	Pad        int // annotation bytes per seeded container
	PluginDir  string
	ConfDir    string
	// RequestTimeout, if set, is the adaptation's plugin request timeout
	// (SetPluginRequestTimeout); upstream's default is 2s.
	RequestTimeout time.Duration
}

// StartUpstreamRuntimeWith starts the binary as spec says and waits until it
// is ready (pre-installed plugins are started and synchronized by then).
func (b *Binaries) StartUpstreamRuntimeWith(spec UpstreamRuntimeSpec, stderr io.Writer) (*UpstreamRuntime, error) {
	args := []string{"-socket", spec.Socket, "-pods", strconv.Itoa(spec.Pods),
		"-containers-per-pod", strconv.Itoa(spec.CtrsPerPod), "-pad", strconv.Itoa(spec.Pad)}
	if spec.PluginDir != "" {
		args = append(args, "-plugin-dir", spec.PluginDir)
	}
	if spec.ConfDir != "" {
		args = append(args, "-plugin-config-dir", spec.ConfDir)
	}
	if spec.RequestTimeout != 0 {
		args = append(args, "-request-timeout", spec.RequestTimeout.String())
	}
	socket := spec.Socket
	cmd := exec.Command(b.UpstreamRuntime, args...)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start upstream runtime: %w", err)
	}
	u := &UpstreamRuntime{
		Proc:    &Proc{Name: "upstream runtime", cmd: cmd, done: make(chan struct{})},
		Socket:  socket,
		in:      in,
		replies: make(chan UpstreamReply, 16),
		Wait:    time.Minute,
	}
	// Read everything before Wait (Wait closes the pipe).
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var r UpstreamReply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				r = UpstreamReply{Err: "bad reply: " + sc.Text()}
			}
			u.replies <- r
		}
		close(u.replies)
		u.Proc.err = cmd.Wait()
		close(u.Proc.done)
	}()
	r, err := u.next()
	if err != nil {
		_ = u.Kill()
		return nil, err
	}
	if !r.OK || r.Ready == "" {
		_ = u.Kill()
		return nil, fmt.Errorf("upstream runtime not ready: %s", r.Err)
	}
	return u, nil
}

func (u *UpstreamRuntime) next() (UpstreamReply, error) {
	select {
	case r, ok := <-u.replies:
		if !ok {
			return UpstreamReply{}, fmt.Errorf("upstream runtime exited")
		}
		return r, nil
	case <-time.After(u.Wait):
		return UpstreamReply{}, fmt.Errorf("no reply from upstream runtime within %s", u.Wait)
	}
}

// Do sends one command ("run-pod P", "create P C", "start C") and returns
// its reply; a reply with an error is returned as an error.
func (u *UpstreamRuntime) Do(args ...string) (UpstreamReply, error) {
	if _, err := fmt.Fprintln(u.in, strings.Join(args, " ")); err != nil {
		return UpstreamReply{}, fmt.Errorf("send %v: %w", args, err)
	}
	r, err := u.next()
	if err != nil {
		return r, err
	}
	if !r.OK {
		return r, fmt.Errorf("%s: %s", strings.Join(args, " "), r.Err)
	}
	return r, nil
}

// Quit stops the runtime's adaptation and waits for the binary to exit.
func (u *UpstreamRuntime) Quit() error {
	if _, err := fmt.Fprintln(u.in, "quit"); err != nil {
		return err
	}
	_ = u.in.Close()
	for {
		if _, err := u.next(); err != nil {
			break
		}
	}
	select {
	case <-u.Done():
		return u.Err()
	case <-time.After(u.Wait):
		_ = u.Kill()
		return fmt.Errorf("upstream runtime did not exit")
	}
}
