package annotator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
)

// state is what the annotator keeps on the host (a hostPath file), for
// operators and for the instance after it. Only the active instance writes
// it; who wrote it last and whether it let go are part of the content, so a
// successor can tell a clean hand-off from a lost predecessor.
type state struct {
	// Owner is the writing instance ("version/instance"), Generation its
	// rollout generation.
	Owner      string `json:"owner"`
	Generation uint64 `json:"generation,omitempty"`
	// Epoch counts changes of owner.
	Epoch uint64 `json:"epoch"`
	// Released is set by the owner's last write, when it stood down
	// (superseded, standby, shutdown, SIGTERM).
	Released bool `json:"released"`
	// Containers maps the containers the owner knows to the instance that
	// stamped them ("" for none).
	Containers map[string]string `json:"containers"`
}

// stateFile reads and writes the state atomically (write a temporary file,
// sync, rename), so a reader or a crash never sees half a file.
type stateFile struct {
	path string
	cur  state // as last written by this instance
}

// handoff tells how an instance came to own the state file.
type handoff struct {
	kind     handoffKind
	previous string // the previous owner
	epoch    uint64 // this owner's epoch
}

type handoffKind int

const (
	handoffFresh   handoffKind = iota // no file yet (or an unreadable one, kept aside)
	handoffClean                      // the previous owner released it
	handoffSelf                       // this instance owned it last (reactivation, restart)
	handoffUnclean                    // the previous owner never released it: killed or lost
)

func (h handoff) String() string {
	switch h.kind {
	case handoffClean:
		return "clean, released by " + h.previous
	case handoffSelf:
		return "this instance owned it last"
	case handoffUnclean:
		return "unclean: " + h.previous + " never released it (killed or lost)"
	}
	return "fresh"
}

// acquire reads the previous owner and writes the file as its new owner.
// Who may own it is the runtime's decision (it made this instance active);
// the previous content only tells how cleanly the previous owner left.
func (f *stateFile) acquire(self string, generation uint64, inv inventory) (handoff, error) {
	prev, err := f.load()
	if err != nil {
		// Bad input loses nothing: keep the unreadable file for inspection.
		aside := f.path + ".unreadable"
		if rerr := os.Rename(f.path, aside); rerr != nil {
			return handoff{}, errors.Join(err, rerr)
		}
		prev = state{}
		err = fmt.Errorf("%w (kept as %s)", err, aside)
	}
	h := handoff{previous: prev.Owner, epoch: prev.Epoch + 1}
	switch {
	case prev.Owner == "":
		h.kind = handoffFresh
	case prev.Owner == self:
		h.kind = handoffSelf
	case prev.Released:
		h.kind = handoffClean
	default:
		h.kind = handoffUnclean
	}
	f.cur = state{Owner: self, Generation: generation, Epoch: h.epoch}
	return h, errors.Join(err, f.write(inv))
}

// update writes the current inventory.
func (f *stateFile) update(inv inventory) error { return f.write(inv) }

// release writes the final state of this owner.
func (f *stateFile) release(inv inventory) error {
	f.cur.Released = true
	return f.write(inv)
}

func (f *stateFile) load() (state, error) {
	var st state
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("reading state file: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return state{}, fmt.Errorf("state file %s: %w", f.path, err)
	}
	return st, nil
}

func (f *stateFile) write(inv inventory) error {
	f.cur.Containers = maps.Clone(inv)
	if f.cur.Containers == nil {
		f.cur.Containers = map[string]string{}
	}
	b, err := json.MarshalIndent(f.cur, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("state file directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.path)+".*")
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing state file: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("replacing state file: %w", err)
	}
	return nil
}
