package adaptation

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nri-handover/nri/api"
)

// warnings keeps the warnings logged, for tests of what an operator is told.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) Debugf(context.Context, string, ...any) {}
func (w *warnings) Infof(context.Context, string, ...any)  {}
func (w *warnings) Errorf(context.Context, string, ...any) {}
func (w *warnings) Warnf(_ context.Context, f string, a ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, fmt.Sprintf(f, a...))
}

// saying returns the warnings containing every one of subs.
func (w *warnings) saying(subs ...string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
next:
	for _, l := range w.lines {
		for _, s := range subs {
			if !strings.Contains(l, s) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

func warnedRegistry(pol handoverPolicy) (*registry, *warnings) {
	g := testRegistry(pol)
	w := &warnings{}
	g.r.log = w
	return g, w
}

// Registrations the rules admit but that are likely mistakes are warned
// about when the plugin registers, naming both instances, before they show
// as failures.
func TestMistakesAreWarnedAtRegistration(t *testing.T) {
	t.Run("a renamed plugin beside its old name in the same workload", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{resolver: KubernetesResolver{}})
		old := inPod(g.optedIn("10", "myplugin", "uid-p-h1", 1, "v1"), "kube-system", "p-h1", "p", 1)
		place(t, g, old)
		g.switchNow(t, old)
		renamed := inPod(g.optedIn("10", "my-plugin", "uid-p-h2", 2, "v2"), "kube-system", "p-h2", "p", 2)
		place(t, g, renamed)
		if got := w.saying("10-my-plugin", "10-myplugin", "under another name"); len(got) != 1 {
			t.Fatalf("warnings %q: want one naming both the renamed and the old plugin", w.lines)
		}
	})
	t.Run("two plugins of one pod, or of other workloads, are no rename", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{resolver: KubernetesResolver{}})
		a := inPod(g.optedIn("10", "cpu", "uid-p-h1", 1, "v1"), "kube-system", "p-h1", "p", 1)
		place(t, g, a)
		g.switchNow(t, a)
		place(t, g, inPod(g.optedIn("20", "mem", "uid-p-h1", 1, "v1"), "kube-system", "p-h1", "p", 1))
		place(t, g, inPod(g.optedIn("30", "net", "uid-q-h1", 1, "v1"), "kube-system", "q-h1", "q", 1))
		if got := w.saying("under another name"); len(got) != 0 {
			t.Fatalf("warned %q", got)
		}
	})
	t.Run("a successor with another index", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{})
		a := g.optedIn("10", "p", "a", 1, "v1")
		place(t, g, a)
		g.switchNow(t, a)
		place(t, g, g.optedIn("20", "p", "b", 2, "v2"))
		if got := w.saying("20-p version v2 instance b", "10-p version v1 instance a", "from 10 to 20"); len(got) != 1 {
			t.Fatalf("warnings %q: want one naming both instances and both indexes", w.lines)
		}
	})
	t.Run("an opted-in instance without identity", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{})
		place(t, g, g.optedIn("10", "p", "", 0, "v1"))
		if got := w.saying("10-p version v1", "NRI_PLUGIN_INSTANCE_ID"); len(got) != 1 {
			t.Fatalf("warnings %q: want one naming the plugin and what to set", w.lines)
		}
	})
	t.Run("a handover annotation with a value the runtime does not know", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{resolver: KubernetesResolver{}})
		p := g.member("p-a", 1, true)
		p.ident.pod.Handover = "workloads"
		place(t, g, p)
		if got := w.saying(`nri.containerd.io/handover="workloads"`, `it accepts "workload"`); len(got) != 1 {
			t.Fatalf("warnings %q: want one naming the value and the accepted one", w.lines)
		}
	})
	t.Run("nothing for a plain rollout", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{})
		a := g.optedIn("10", "p", "a", 1, "v1")
		place(t, g, a)
		g.switchNow(t, a)
		place(t, g, g.optedIn("10", "p", "b", 2, "v2"))
		if len(w.lines) != 0 {
			t.Fatalf("warned %q", w.lines)
		}
	})
}

// A new name at the index of an active plugin that opted into handover,
// outside pods, is most likely a rename: warned at registration, in either
// order of handover among the two, naming both; not for another index, an
// old plugin that did not opt in or is not active, or the same name.
func TestLikelyRenameIsWarnedAtRegistration(t *testing.T) {
	const says = "if it is that plugin renamed, it does not take over"
	for _, tc := range []struct {
		name string
		old  func(g *registry) *plugin
		new  func(g *registry) *plugin
		warn bool
	}{
		{"renamed, both opted in", func(g *registry) *plugin { return g.optedIn("40", "myplugin", "a", 1, "v1") },
			func(g *registry) *plugin { return g.optedIn("40", "my-plugin", "b", 2, "v2") }, true},
		{"renamed, the new one with handover turned off", func(g *registry) *plugin { return g.optedIn("40", "myplugin", "a", 1, "v1") },
			func(g *registry) *plugin { return g.legacyOf("40", "my-plugin", 2) }, true},
		{"another index", func(g *registry) *plugin { return g.optedIn("40", "myplugin", "a", 1, "v1") },
			func(g *registry) *plugin { return g.optedIn("50", "my-plugin", "b", 2, "v2") }, false},
		{"the old one did not opt in", func(g *registry) *plugin { return g.legacyOf("40", "myplugin", 1) },
			func(g *registry) *plugin { return g.optedIn("40", "my-plugin", "b", 2, "v2") }, false},
		{"the same name", func(g *registry) *plugin { return g.optedIn("40", "myplugin", "a", 1, "v1") },
			func(g *registry) *plugin { return g.optedIn("40", "myplugin", "b", 2, "v2") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, w := warnedRegistry(handoverPolicy{})
			old := tc.old(g)
			place(t, g, old)
			g.switchNow(t, old)
			place(t, g, tc.new(g))
			got := w.saying(says)
			if !tc.warn {
				if len(got) != 0 {
					t.Fatalf("warned %q", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], "40-my-plugin") || !strings.Contains(got[0], "40-myplugin") {
				t.Fatalf("warnings %q: want one naming both plugins", w.lines)
			}
		})
	}
	t.Run("not while the old one is only a candidate", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{})
		place(t, g, g.optedIn("40", "myplugin", "a", 1, "v1"))
		place(t, g, g.optedIn("40", "my-plugin", "b", 2, "v2"))
		if got := w.saying(says); len(got) != 0 {
			t.Fatalf("warned %q", got)
		}
	})
}

// The conflict at container creation between a plugin and another of its
// index, one of them opted in, says a rename is the likely cause; between
// plugins that did not opt in it is upstream's error as it is.
func TestConflictNamesLikelyRename(t *testing.T) {
	g := testRegistry(handoverPolicy{})
	conflict := func(a, b *plugin) error {
		r := collectCreateContainerResult(newCreateRequest())
		if err := r.apply(adjusted(&api.ContainerAdjustment{Annotations: map[string]string{"k": "a"}}), a.name()); err != nil {
			t.Fatal(err)
		}
		err := r.apply(adjusted(&api.ContainerAdjustment{Annotations: map[string]string{"k": "b"}}), b.name())
		if err == nil {
			t.Fatal("no conflict")
		}
		return renameHint(err, b, []*plugin{a, b})
	}
	const upstream = `plugins "40-my-plugin" and "40-myplugin" both tried to set annotation "k"`
	err := conflict(g.optedIn("40", "myplugin", "a", 1, "v1"), g.optedIn("40", "my-plugin", "b", 2, "v2"))
	if !strings.HasPrefix(err.Error(), upstream) || !strings.Contains(err.Error(), "if one is the other renamed") {
		t.Errorf("conflict %q, want upstream's error saying a rename is the likely cause", err)
	}
	err = conflict(g.legacyOf("40", "myplugin", 1), g.legacyOf("40", "my-plugin", 2))
	if err.Error() != upstream {
		t.Errorf("conflict between plugins that did not opt in: %q, want upstream's %q", err, upstream)
	}
	err = conflict(g.optedIn("30", "myplugin", "a", 1, "v1"), g.optedIn("40", "my-plugin", "b", 2, "v2"))
	if strings.Contains(err.Error(), "renamed") {
		t.Errorf("conflict between plugins of two indexes %q says renamed", err)
	}
}

// The takeover log line names the predecessor by what is known of it, never
// by empty quotes.
func TestTakeoverLineLeavesOutWhatIsUnknown(t *testing.T) {
	g := testRegistry(handoverPolicy{})
	p := g.optedIn("10", "p", "b", 2, "v2")
	for _, tc := range []struct {
		t    *api.Takeover
		want string
	}{
		{&api.Takeover{PredecessorGeneration: 1}, "generation 1"},
		{&api.Takeover{PredecessorInstance: "a"}, "instance a"},
		{&api.Takeover{PredecessorVersion: "v1", PredecessorInstance: "a", PredecessorGeneration: 1}, "version v1 instance a generation 1"},
	} {
		if got := g.describeTakeover(p, tc.t); got != tc.want {
			t.Errorf("takeover from %v described as %q, want %q", tc.t, got, tc.want)
		}
	}
}

// repeatedPhrase returns a run of three words line says twice, or "".
func repeatedPhrase(line string) string {
	w := strings.Fields(line)
	seen := map[string]bool{}
	for i := 0; i+3 <= len(w); i++ {
		phrase := strings.Join(w[i:i+3], " ")
		if seen[phrase] {
			return phrase
		}
		seen[phrase] = true
	}
	return ""
}

// The takeover line says where each instance runs once, for every pair of
// places (the author-walk's "outside any pod from no pod the runtime
// verified" said outside twice, the second time unclearly).
func TestTakeoverLineSaysEachPlaceOnce(t *testing.T) {
	podA := func(p *plugin) *plugin { return inPod(p, "kube-system", "p-a", "p", 1) }
	podB := func(p *plugin) *plugin { return inPod(p, "kube-system", "p-b", "p", 2) }
	unplaced := func(p *plugin) *plugin { return p }
	for _, tc := range []struct {
		name       string
		pred, succ func(*plugin) *plugin
		want       string
	}{
		{"both outside", onHost, onHost, "version v1 instance a generation 1, both outside any pod"},
		{"both in pods", podA, podB, "version v1 instance a generation 1, moving from pod kube-system/p-a (template generation 1) to pod kube-system/p-b (template generation 2)"},
		{"same pod", podA, podA, "version v1 instance a generation 1, both in pod kube-system/p-a (template generation 1)"},
		{"into a pod", onHost, podB, "version v1 instance a generation 1, moving from outside any pod to pod kube-system/p-b (template generation 2)"},
		{"out of a pod", podA, onHost, "version v1 instance a generation 1, moving from pod kube-system/p-a (template generation 1) to outside any pod"},
		{"predecessor unplaced", unplaced, onHost, "version v1 instance a generation 1, itself outside any pod"},
		{"successor unplaced", onHost, unplaced, "version v1 instance a generation 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := testRegistry(handoverPolicy{})
			a := tc.pred(g.optedIn("10", "p", "a", 1, "v1"))
			place(t, g, a)
			g.switchNow(t, a)
			b := tc.succ(g.optedIn("10", "p", "b", 2, "v2"))
			place(t, g, b)
			got := g.describeTakeover(b, g.takeoverFrom(b))
			if got != tc.want {
				t.Errorf("takeover described as %q, want %q", got, tc.want)
			}
			if r := repeatedPhrase(got); r != "" {
				t.Errorf("%q says %q twice", got, r)
			}
			if strings.Contains(got, "no pod") {
				t.Errorf("%q says outside a second time", got)
			}
		})
	}
}
