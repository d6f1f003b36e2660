package stub

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sync"
)

// readiness publishes whether this instance is the one the runtime routes
// events to. Everything that reports it (Ready, WaitReady, the ready file,
// the /readyz handler) reads this one value, so they never disagree.
type readiness struct {
	mu     sync.Mutex
	ready  bool
	why    string        // why not ready, for /readyz and logs
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

// set records the new state; why explains a false one.
func (r *readiness) set(ready bool, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()

	if !ready {
		r.why = why
	}
	if r.ready == ready {
		return
	}
	r.ready = ready

	if ready {
		r.logger.Infof(context.Background(), "plugin %s is ready", r.plugin)
		close(r.readyC)
		r.writeFile()
		return
	}
	r.logger.Infof(context.Background(), "plugin %s is not ready: %s", r.plugin, why)
	r.readyC = make(chan struct{})
	r.removeFile()
}

func (r *readiness) get() (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ready, r.why
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

// ServeHTTP answers a Kubernetes httpGet readinessProbe: 200 while ready,
// 503 with the reason otherwise.
func (r *readiness) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	ready, why := r.get()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if ready {
		w.WriteHeader(http.StatusOK)
		fmt.Fprintln(w, "ok")
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintf(w, "not ready: %s\n", why)
}
