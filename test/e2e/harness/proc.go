package harness

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// Proc is a child process the suite started.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProc starts bin with args; stdout and stderr go to out (may be nil).
func StartProc(name, bin string, args []string, out io.Writer) (*Proc, error) {
	return startCmd(name, exec.Command(bin, args...), out)
}

// StartProcEnv is StartProc with env added to the suite's environment.
func StartProcEnv(name, bin string, args []string, out io.Writer, env []string) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return startCmd(name, cmd, out)
}

// StartProcAs is StartProc with the process running as user uid and group
// gid (the caller must be allowed to switch to them, e.g. root). The binary
// and every file the process uses must be accessible to that user.
func StartProcAs(name, bin string, args []string, out io.Writer, uid, gid uint32) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	return startCmd(name, cmd, out)
}

func startCmd(name string, cmd *exec.Cmd, out io.Writer) (*Proc, error) {
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{Name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the process's exit error, valid after Done.
func (p *Proc) Err() error { return p.err }

// Signal sends sig unless the process has exited.
func (p *Proc) Signal(sig os.Signal) error {
	if p.Exited() {
		return nil
	}
	return p.cmd.Process.Signal(sig)
}

// Kill sends SIGKILL unless the process has exited.
func (p *Proc) Kill() error { return p.Signal(syscall.SIGKILL) }

// ProcessGone reports whether pid no longer exists, neither running nor as
// an unreaped zombie.
func ProcessGone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return errors.Is(err, os.ErrNotExist)
}

// ProcessState returns pid's state letter from /proc ("R", "S", "Z", ...)
// or "" when it does not exist.
func ProcessState(pid int) string {
	buf, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(buf)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}
