package adaptation

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nri-handover/nri/api"
)

// startListener creates the socket for external plugins and accepts
// connections in the background.
func (r *Adaptation) startListener() error {
	if r.dontListen {
		r.log.Infof(r.ctx, "connections from external plugins are disabled")
		return nil
	}

	if err := os.MkdirAll(filepath.Dir(r.socketPath), 0o700); err != nil {
		return fmt.Errorf("failed to create directory for NRI socket %q: %w", r.socketPath, err)
	}
	if err := removeStaleSocket(r.socketPath); err != nil {
		return err
	}

	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: r.socketPath, Net: "unix"})
	if err != nil {
		return fmt.Errorf("failed to create NRI socket %q: %w", r.socketPath, err)
	}
	r.listener = l

	spawn(&r.wg, func() { r.acceptConnections(l) })
	r.log.Infof(r.ctx, "accepting plugin connections on %s", r.socketPath)
	return nil
}

// removeStaleSocket deletes a socket left behind by a previous runtime, but
// refuses to delete anything that is not a socket.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("failed to check NRI socket %q: %w", path, err)
	case fi.Mode()&fs.ModeSocket == 0:
		return fmt.Errorf("refusing to replace %q with the NRI socket: not a socket", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("failed to remove stale NRI socket %q: %w", path, err)
	}
	return nil
}

func (r *Adaptation) stopListener() {
	if r.listener != nil {
		r.listener.Close()
	}
}

// acceptConnections hands every connection to its own goroutine, so that a
// plugin hanging in registration never holds up another one.
func (r *Adaptation) acceptConnections(l net.Listener) {
	backoff := 5 * time.Millisecond
	for {
		conn, err := l.Accept()
		if err != nil {
			if r.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				r.log.Infof(r.ctx, "stopped accepting plugin connections")
				return
			}
			// Out of file descriptors and the like: wait and retry.
			r.log.Errorf(r.ctx, "failed to accept plugin connection: %v", err)
			select {
			case <-time.After(backoff):
			case <-r.ctx.Done():
				return
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		spawn(&r.wg, func() { r.serveConn(conn) })
	}
}

// serveConn takes an external plugin through registration, configuration and
// admission.
func (r *Adaptation) serveConn(conn net.Conn) {
	defer r.trace(nil, pointServed, nil)
	p := r.newPlugin(kindExternal)
	if err := p.connect(conn); err != nil {
		r.log.Errorf(r.ctx, "failed to set up plugin connection: %v", err)
		conn.Close()
		<-p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_PROTOCOL_ERROR, err.Error(), nil)
		return
	}
	// Tracked only once connected: Stop disconnects every tracked plugin,
	// and reads what connect writes. Reading is blocked until start, so
	// nothing on the connection can close it before this.
	if err := r.reg.track(p); err != nil {
		<-p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN, "runtime is shutting down", nil)
		return
	}
	// A failed start has been logged where it failed: a refused
	// registration by RegisterPlugin, the rest by the disconnect.
	if err := p.start(r.ctx); err != nil {
		return
	}
	_ = joinOf(r.reg, p).admit(r.ctx) // a failure is logged by joining.fail
}
