package generate_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/ocigen"
)

// buildUpstreamGenerator compiles test/upstream/generate, which applies
// adjustments with upstream v0.12.5's generator. It links upstream's API, so
// it runs in a process of its own; outside any Go workspace, so that
// github.com/containerd/nri is upstream's module and not a stand-in.
func buildUpstreamGenerator(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not available")
	}
	out, err := exec.Command(goTool, "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "upstream-generate")
	cmd := exec.Command(goTool, "build", "-o", bin, "./test/upstream/generate")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the upstream generator: %v\n%s", err, out)
	}
	return bin
}

// Every case, applied by upstream's generator and by ours to the same spec
// through the same underlying generator and runtime callbacks, gives the same
// spec (as JSON, what runtimes pass on) and the same error.
func TestMatchesUpstream(t *testing.T) {
	bin := buildUpstreamGenerator(t)

	var input []ocigen.Case
	var cases []adjustCase
	for _, c := range adjustCases {
		if c.oursOnly {
			continue
		}
		adj := []byte("null")
		if c.adjust != nil {
			var err error
			if adj, err = protojson.Marshal(c.adjust); err != nil {
				t.Fatal(err)
			}
		}
		input = append(input, ocigen.Case{Name: c.name, Spec: c.preparedSpec(), Adjustment: adj, Callbacks: c.callbacks})
		cases = append(cases, c)
	}
	stdin, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("upstream generator: %v\n%s", err, stderr.String())
	}
	var results []ocigen.Result
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != len(cases) {
		t.Fatalf("%d results for %d cases", len(results), len(cases))
	}

	for i, c := range cases {
		up := results[i]
		t.Run(c.name, func(t *testing.T) {
			if strings.HasPrefix(up.Error, "panic:") {
				// A skip here would let a broken comparison pass. Input
				// upstream cannot take is a case for oursOnly.
				t.Fatalf("upstream panics: %s (mark the case oursOnly if upstream cannot take it)", up.Error)
			}
			// Ours gets the adjustment as upstream's got it, through the
			// encoding (a nil map entry arrives as an empty message, as over
			// the wire).
			if c.adjust != nil {
				decoded := &api.ContainerAdjustment{}
				if err := protojson.Unmarshal(input[i].Adjustment, decoded); err != nil {
					t.Fatal(err)
				}
				c.adjust = decoded
			}
			got, err := applyOurs(c)
			errText := ""
			if err != nil {
				errText = err.Error()
			}
			if errText != up.Error {
				t.Fatalf("error %q, upstream %q", errText, up.Error)
			}
			if g, w := specJSON(t, got), specJSON(t, up.Spec); g != w {
				t.Fatalf("adjusted spec:\n%s\nupstream:\n%s", g, w)
			}
		})
	}
}
