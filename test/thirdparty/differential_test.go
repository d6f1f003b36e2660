package thirdparty

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// client is a third-party NRI plugin, built unchanged on each side.
type client struct {
	name   string // registers as 10-<name>
	module string // its module's directory
	pkg    string // the package to build, relative to module
	// upstreamNRI is the directory of the upstream NRI release the
	// Upstream build is replaced to ("" keeps the module's own requirement);
	// wantUpstream is how go version -m names the NRI it then links.
	upstreamNRI, wantUpstream string
	extra                     []string // replaces both builds need
	config                    string   // the plugin's configuration file, if any
	args                      []string // passed by the wrapper the adaptation launches (@CELL@: the cell's directory)
	expect                    string   // in the records of every cell: the plugin answered
	expectLog                 string   // in the plugin's output in every cell: it saw the scenario
	external                  int      // >0: launched by the runtime after Start, connecting this many plugins to the socket
	scenario                  scenario
	skip                      string // why it is not built, if it is not
}

type scenario struct {
	Pods       []map[string]any `json:"pods"`
	Containers []map[string]any `json:"containers"`
	Update     map[string]any   `json:"update,omitempty"`
	PodUpdate  map[string]any   `json:"podUpdate,omitempty"`
}

func pod(id string, annotations map[string]string) map[string]any {
	return map[string]any{
		"id": id, "name": id, "uid": "uid-" + id, "namespace": "default",
		"labels": map[string]string{"app": id}, "annotations": annotations,
		"linux": map[string]any{"cgroupParent": "/kubepods/" + id, "cgroupsPath": "/kubepods/" + id + "/pause"},
	}
}

func ctr(id, podID, name string) map[string]any {
	return map[string]any{
		"id": id, "podSandboxId": podID, "name": name,
		"labels": map[string]string{"ctr": name}, "annotations": map[string]string{"io.kubernetes.container.name": name},
		"args": []string{"sleep", "inf"}, "env": []string{"PATH=/usr/bin:/bin"},
		"linux": map[string]any{
			"resources": map[string]any{
				"memory": map[string]any{"limit": map[string]any{"value": "104857600"}},
				"cpu":    map[string]any{"shares": map[string]any{"value": "512"}, "quota": map[string]any{"value": "50000"}, "period": map[string]any{"value": "100000"}},
			},
			"cgroupsPath": "/kubepods/" + podID + "/" + id,
		},
	}
}

// cellResult is one cell's normalised records.
type cellResult struct {
	rt, plugin Side
	out        string
	err        error
}

// TestDifferential runs each client, built on upstream and on ours,
// under the test runtime built on upstream and on ours: the four cells
// must record the same.
func TestDifferential(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	rts, err := e.runtimes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range e.clients(t) {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			t.Parallel()
			bins := e.buildClient(ctx, t, c)
			var results []cellResult
			for _, rs := range []Side{Upstream, Ours} {
				for _, ps := range []Side{Upstream, Ours} {
					out, err := e.runCell(ctx, t, c, rts[rs], bins[ps], string(rs)+"-"+string(ps))
					results = append(results, cellResult{rs, ps, out, err})
				}
			}
			ref := results[0]
			if ref.err != nil {
				t.Fatalf("cell runtime=%s plugin=%s: %v", ref.rt, ref.plugin, ref.err)
			}
			defer func() {
				if t.Failed() || os.Getenv("NRI_THIRDPARTY_SHOW") != "" {
					t.Logf("records of runtime=upstream plugin=upstream:\n%s", ref.out)
				}
			}()
			for _, r := range results[1:] {
				if r.err != nil {
					t.Errorf("cell runtime=%s plugin=%s: %v", r.rt, r.plugin, r.err)
					continue
				}
				if r.out != ref.out {
					t.Errorf("cell runtime=%s plugin=%s differs from runtime=upstream plugin=upstream:\n%s", r.rt, r.plugin, diff(ref.out, r.out))
				}
			}
		})
	}
}

// buildClient builds c on both sides into the harness directory.
func (e *env) buildClient(ctx context.Context, t *testing.T, c client) map[Side]string {
	t.Helper()
	bins := map[Side]string{}
	errs := map[Side]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, side := range []Side{Upstream, Ours} {
		mod := e.modfile(t, c.name, c.module, side, c.upstreamNRI, c.extra)
		out := filepath.Join(e.dir, "bin", string(side), c.name)
		want := c.wantUpstream
		if side == Ours {
			want = filepath.Join(e.root, "containerd-nri")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := build(ctx, c.module, mod, out, c.pkg, want)
			mu.Lock()
			bins[side], errs[side] = out, err
			mu.Unlock()
		}()
	}
	wg.Wait()
	for side, err := range errs {
		if err != nil {
			t.Fatalf("build %s on %s: %v", c.name, side, err)
		}
	}
	return bins
}

// runCell runs the runtime with the plugin pre-installed and returns its
// records, normalised: the cell's directory (socket, plugin and config
// paths) reads <cell>.
func (e *env) runCell(ctx context.Context, t *testing.T, c client, runtime, plugin, cell string) (string, error) {
	t.Helper()
	// Short: the socket path must fit a sockaddr_un.
	dir, err := os.MkdirTemp(e.dir, "c")
	if err != nil {
		return "", err
	}
	pluginDir, configDir := filepath.Join(dir, "plugins"), filepath.Join(dir, "conf")
	for _, d := range []string{pluginDir, configDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	// The adaptation launches plugins without arguments and with an empty
	// environment and no output: a wrapper passes the client's arguments
	// and keeps its output, which shows that it ran.
	installed := filepath.Join(pluginDir, "10-"+c.name)
	pluginLog := filepath.Join(dir, "plugin.log")
	script := "#!/bin/sh\nexec " + plugin + " " + strings.Join(c.args, " ") + " \"$@\" >>" + pluginLog + " 2>&1\n"
	script = strings.ReplaceAll(script, "@CELL@", dir)
	if err := os.WriteFile(installed, []byte(script), 0o755); err != nil {
		return "", err
	}
	if c.config != "" {
		if err := os.WriteFile(filepath.Join(configDir, "10-"+c.name+".conf"), []byte(c.config), 0o644); err != nil {
			return "", err
		}
	}
	sc, err := json.Marshal(c.scenario)
	if err != nil {
		return "", err
	}
	scFile, outFile := filepath.Join(dir, "scenario.json"), filepath.Join(dir, "records.json")
	if err := os.WriteFile(scFile, sc, 0o644); err != nil {
		return "", err
	}
	args := []string{"-socket", filepath.Join(dir, "nri.sock"),
		"-plugin-dir", pluginDir, "-plugin-config-dir", configDir, "-scenario", scFile, "-out", outFile}
	if c.external > 0 {
		// Not pre-installed: started by the runtime once it serves the
		// socket, connecting to it on its own.
		launch := filepath.Join(dir, "launch")
		if err := os.Rename(installed, launch); err != nil {
			return "", err
		}
		args = append(args, "-launch", launch, "-external", fmt.Sprint(c.external))
	}
	// A deadline, not a timing assertion: a cell whose plugin never
	// registers fails with its output instead of hanging the suite.
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, runtime, args...)
	cmd.Dir = dir
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err = cmd.Run()
	if err := os.WriteFile(filepath.Join(dir, "log.txt"), log.Bytes(), 0o644); err != nil {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w\n%s", cell, err, log.String())
	}
	out, err := os.ReadFile(outFile)
	if err != nil {
		return "", err
	}
	plog, err := os.ReadFile(pluginLog)
	if err != nil {
		return "", fmt.Errorf("%s: the plugin left no output: %w", cell, err)
	}
	if c.expectLog != "" && !bytes.Contains(plog, []byte(c.expectLog)) {
		return "", fmt.Errorf("%s: the plugin's output lacks %q, the sign that it saw the scenario:\n%s", cell, c.expectLog, plog)
	}
	records := normalise(string(out), dir)
	if c.expect != "" && !strings.Contains(records, c.expect) {
		return "", fmt.Errorf("%s: the records lack %q, the plugin's answer:\n%s\nplugin:\n%s", cell, c.expect, records, plog)
	}
	return records, nil
}

// pidRE matches the logger plugin's process id in its adjustments.
var pidRE = regexp.MustCompile(`logger-pid-[0-9]+`)

// normalise replaces what must differ between cells: the cell's directory
// (socket, plugin and configuration paths) and the logger plugin's pid.
func normalise(out, dir string) string {
	out = strings.ReplaceAll(out, dir, "<cell>")
	return pidRE.ReplaceAllString(out, "logger-pid-<pid>")
}

// diff shows the lines of b that are not at the same place in a.
func diff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("%4d - %s\n     + %s", i+1, x, y))
		}
	}
	return strings.Join(out, "\n")
}
