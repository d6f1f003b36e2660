package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nri-handover/nri/pkg/stub"
)

// fleet runs example-plugin processes as a DaemonSet's pods would run them:
// each with its pod's identity (instance id, rollout generation) from the
// environment, as the downward API gives it, and on the command line.
type fleet struct {
	bin, socket, dir string
	tl               *timeline

	mu    sync.Mutex
	procs []*proc
}

// proc is one plugin process (one container start: a restart is a new proc
// with the same instance id).
type proc struct {
	instance, version string
	generation        uint64
	readyFile, log    string
	life              *life

	cmd    *exec.Cmd
	exited chan struct{}
}

func (f *fleet) start(version, instance string, generation uint64) (*proc, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.procs)
	p := &proc{
		instance: instance, version: version, generation: generation,
		readyFile: filepath.Join(f.dir, fmt.Sprintf("%s-%d.ready", instance, n)),
		log:       filepath.Join(f.dir, fmt.Sprintf("%s-%d.log", instance, n)),
		exited:    make(chan struct{}),
	}
	logf, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(f.bin, "-socket", f.socket, "-version", version, "-instance", instance,
		"-generation", strconv.FormatUint(generation, 10), "-ready-file", p.readyFile)
	p.cmd.Env = append(os.Environ(), stub.InstanceIDEnvVar+"="+instance,
		stub.GenerationEnvVar+"="+strconv.FormatUint(generation, 10))
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.life = f.tl.started(instance, version, generation, time.Now())
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		f.tl.ended(p.life, time.Now(), "failed to start")
		return nil, fmt.Errorf("start plugin %s: %w", instance, err)
	}
	go func() {
		_ = p.cmd.Wait()
		f.tl.ended(p.life, time.Now(), exitHow(p.cmd.ProcessState))
		logf.Close()
		close(p.exited)
	}()
	f.procs = append(f.procs, p)
	return p, nil
}

func exitHow(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		if ws.Signal() == syscall.SIGKILL {
			return "kill -9"
		}
		return ws.Signal().String()
	}
	if ps.ExitCode() == 0 {
		return "exited"
	}
	return fmt.Sprintf("exit status %d", ps.ExitCode())
}

// killAll ends every process still running (the demo's cleanup).
func (f *fleet) killAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.procs {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *proc) ready() bool {
	_, err := os.Stat(p.readyFile)
	return err == nil
}

// waitReady polls the ready file as a kubelet readiness probe would.
func (p *proc) waitReady() error {
	deadline := time.Now().Add(10 * time.Second)
	for !p.ready() {
		if time.Now().After(deadline) {
			return fmt.Errorf("plugin %s not ready within 10s: %s", p.instance, p.lastLine())
		}
		select {
		case <-p.exited:
			return fmt.Errorf("plugin %s exited before it was ready: %s", p.instance, p.lastLine())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// freeze stops the process (SIGSTOP) and returns once every thread of it
// has stopped: a stop is not immediate, and until the kernel got to a
// thread that runs Go code, that thread may still answer a request.
func (p *proc) freeze() error {
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Second)
	for !stopped(p.cmd.Process.Pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("plugin %s did not stop within 2s", p.instance)
		}
		time.Sleep(100 * time.Microsecond)
	}
	return nil
}

// stopped tells whether every thread of process pid is stopped (Linux).
func stopped(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			return false
		}
		// pid (comm) state ...: comm may contain spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}

// kill is kill -9: the process gets no chance to say goodbye.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// term is what the DaemonSet controller's pod deletion does: SIGTERM, then
// SIGKILL after the grace period (here 10s).
func (p *proc) term() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	p.waitExit()
}

func (p *proc) waitExit() {
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.kill()
	}
}

// lastLine is the last log line of the process, shortened.
func (p *proc) lastLine() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	l := lines[len(lines)-1]
	if len(l) > 200 {
		l = l[:200] + "..."
	}
	return l
}

var errNotFrozen = errors.New("the successor never started its handover")

// running is the running process of instance, if any.
func (f *fleet) running(instance string) *proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.procs) - 1; i >= 0; i-- {
		p := f.procs[i]
		if p.instance != instance {
			continue
		}
		select {
		case <-p.exited:
		default:
			return p
		}
	}
	return nil
}
