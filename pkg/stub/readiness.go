package stub

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	stdnet "net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// readyState is where this instance stands in a rollout.
type readyState int

const (
	notReady   readyState = iota
	active                // the runtime routes the plugin's events here
	handedOver            // a successor took over; this one stands by or is held until stopped
)

// readiness publishes whether this instance is the one the runtime routes
// events to. Everything that reports it (Ready, WaitReady, the ready file,
// the /readyz handler) reads this one value, so they never disagree about
// who is active. Only the /readyz handler, the pod's readinessProbe, also
// answers 200 once the instance handed over (see ServeHTTP).
type readiness struct {
	mu     sync.Mutex
	state  readyState
	why    string        // why not active, for /readyz and logs
	readyC chan struct{} // closed while ready
	file   string        // exists iff ready, when set
	logger Logger
	plugin string
	info   func() string // ready file content
}

func newReadiness(logger Logger, plugin, file string, info func() string) *readiness {
	r := &readiness{
		why:    "not started",
		readyC: make(chan struct{}),
		file:   file,
		logger: logger,
		plugin: plugin,
		info:   info,
	}
	// A file left by an earlier run of this container would claim readiness
	// before the runtime confirmed anything.
	r.removeFile()
	return r
}

// set records the new state; why explains any state but active.
func (r *readiness) set(st readyState, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()

	if st != active {
		r.why = why
	}
	if r.state == st {
		return
	}
	was := r.state
	r.state = st

	// A reason that names the plugin (a ShutdownError) does not name it
	// again in the line that already does.
	why = strings.TrimPrefix(why, "plugin "+r.plugin+": ")
	switch {
	case st == active:
		r.logger.Infof(context.Background(), "plugin %s is ready", r.plugin)
		close(r.readyC)
		r.writeFile()
		return
	case st == handedOver:
		r.logger.Infof(context.Background(), "plugin %s handed over (%s); its /readyz answers 200 until it is stopped", r.plugin, why)
	default:
		r.logger.Infof(context.Background(), "plugin %s is not ready: %s", r.plugin, why)
	}
	if was == active {
		r.readyC = make(chan struct{})
		r.removeFile()
	}
}

// get tells whether the instance is active, and why not.
func (r *readiness) get() (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state == active, r.why
}

// probe is get for the readinessProbe: handed over counts as ready.
func (r *readiness) probe() (readyState, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state, r.why
}

func (r *readiness) wait(ctx context.Context) error {
	r.mu.Lock()
	c := r.readyC
	r.mu.Unlock()
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("plugin %s: waiting for readiness: %w", r.plugin, ctx.Err())
	}
}

// writeFile creates the file atomically, so that a probe never sees it half
// written. Called with r.mu held, which orders file updates like state changes.
func (r *readiness) writeFile() {
	if r.file == "" {
		return
	}
	dir := filepath.Dir(r.file)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.logger.Errorf(context.Background(), "plugin %s: ready file: %v", r.plugin, err)
		return
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(r.file)+".*")
	if err != nil {
		r.logger.Errorf(context.Background(), "plugin %s: ready file: %v", r.plugin, err)
		return
	}
	_, werr := tmp.WriteString(r.info())
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		r.logger.Errorf(context.Background(), "plugin %s: ready file: %v", r.plugin, err)
		return
	}
	if err := os.Rename(tmp.Name(), r.file); err != nil {
		os.Remove(tmp.Name())
		r.logger.Errorf(context.Background(), "plugin %s: ready file: %v", r.plugin, err)
	}
}

func (r *readiness) removeFile() {
	if r.file == "" {
		return
	}
	if err := os.Remove(r.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.logger.Errorf(context.Background(), "plugin %s: removing ready file: %v", r.plugin, err)
	}
}

// ServeHTTP answers a Kubernetes httpGet readinessProbe: 200 while active,
// and 200 again once this instance handed over to a successor (standing by,
// or superseded and held until stopped), 503 with the reason otherwise.
// Why the handed-over 200: the DaemonSet controller counts a node available
// by its oldest pod until the new pod has been Ready for minReadySeconds, so
// an old pod that turned unready at the switch left the node unavailable for
// ~11 s per rollout on a real node. The body says which of the two it is.
func (r *readiness) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	st, why := r.probe()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	switch st {
	case active:
		w.WriteHeader(http.StatusOK)
		fmt.Fprintln(w, "ok: active")
		return
	case handedOver:
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "ok: handed over, serves no events: %s\n", why)
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintf(w, "not ready: %s\n", why)
}

// ReadyzAddrEnvVar, in the environment of a plugin that opted in with
// WithHandover, makes the stub serve ReadyzHandler at /readyz on that
// address (host:port, such as ":8080", on the pod's network) from Start or
// Run until Stop or Run returns, so that the manifest's httpGet
// readinessProbe is answered with no code beyond WithHandover. Unset, the
// stub serves nothing and a plugin may serve ReadyzHandler itself.
const ReadyzAddrEnvVar = "NRI_PLUGIN_READYZ_ADDR"

// readyzAddrFromEnv reads ReadyzAddrEnvVar; a value that is no address is
// an error rather than a probe that never succeeds.
func readyzAddrFromEnv() (string, error) {
	addr := strings.TrimSpace(os.Getenv(ReadyzAddrEnvVar))
	if addr == "" {
		return "", nil
	}
	_, port, err := stdnet.SplitHostPort(addr)
	if err == nil {
		if n, perr := strconv.Atoi(port); perr != nil || n < 1 || n > 65535 {
			err = fmt.Errorf("port %q is not a number from 1 to 65535", port)
		}
	}
	if err != nil {
		return "", fmt.Errorf("$%s=%q: want host:port to serve /readyz on, such as :8080: %w", ReadyzAddrEnvVar, addr, err)
	}
	return addr, nil
}

// readyzServer serves /readyz on ReadyzAddrEnvVar's address.
type readyzServer struct {
	srv  *http.Server
	done chan struct{}
}

// serveReadyz starts serving /readyz if the environment asked for it and it
// is not served yet, and tells whether it started it. A port that cannot be
// bound fails the start: the readinessProbe would never succeed, and the
// rollout would stall silently.
func (s *stub) serveReadyz() (started bool, err error) {
	if s.readyzAddr == "" {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readyz != nil {
		return false, nil
	}
	lis, err := stdnet.Listen("tcp", s.readyzAddr)
	if err != nil {
		return false, fmt.Errorf("plugin %s: serving /readyz ($%s): %w", s.Name(), ReadyzAddrEnvVar, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/readyz", s.ready)
	z := &readyzServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(z.done)
		_ = z.srv.Serve(lis) // ends with Close
	}()
	s.readyz = z
	s.logger.Infof(context.Background(), "plugin %s serves /readyz on %s ($%s)", s.Name(), lis.Addr(), ReadyzAddrEnvVar)
	return true, nil
}

// stopReadyz stops serving /readyz, if served, and waits for the server.
func (s *stub) stopReadyz() {
	s.mu.Lock()
	z := s.readyz
	s.readyz = nil
	s.mu.Unlock()
	if z == nil {
		return
	}
	z.srv.Close()
	<-z.done
}
