package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// measures names, for each run that records its commit, the code whose
// change makes its figures stale: the library, and the harness that ran it.
// Tests of the library and documents measure nothing, so their changes do
// not count (as the runs' own "+changes" mark, test/realruntime/results.sh).
var measures = map[string][]string{
	"bench":          {"api", "pkg", "internal", "test/bench"},
	"e2e-containerd": {"api", "pkg", "internal", "containerd-nri", "plugins", "examples", "test/realcontainerd", "test/realruntime"},
	// Upstream v0.12.5 with upstream-patches/ applied: the patches, the
	// script that applies them and the harness, not this module.
	"e2e-containerd-patched": {"upstream-patches", "hack/upstream-patches.sh", "test/realcontainerd/patched", "test/realcontainerd/patched.sh", "test/realcontainerd/build-containerd.sh", "test/realruntime"},
	"e2e-docker":             {"api", "pkg", "internal", "containerd-nri", "examples", "test/realdocker", "test/realruntime"},
	"e2e-kubernetes":         {"api", "pkg", "internal", "containerd-nri", "examples", "deploy", "test/realkube", "test/realruntime"},
	"patterns":               {"test/upstream/patterns"},
	"explore-power":          {"pkg/adaptation"},
}

// staleResults lists each results file whose commit is older than the last change
// to the code it measures, one line each; a file whose run this table does
// not know, or that is rewritten by every run, is not listed.
func staleResults(root string) ([]string, error) {
	results, err := readResults(filepath.Join(root, "docs", "results"))
	if err != nil {
		return nil, err
	}
	var out []string
	for suite, run := range results {
		paths, ok := measures[suite]
		if !ok || run["commit"] == "" {
			continue
		}
		args := []string{"log", "-1", "--format=%h %<(60,trunc)%s", "--"}
		for _, p := range paths {
			args = append(args, p, ":(exclude,glob)"+p+"/**/*_test.go", ":(exclude,glob)"+p+"/**/testdata/**",
				":(exclude,glob)"+p+"/**/*.md")
		}
		last, err := git(root, args...)
		if err != nil || last == "" {
			continue // no history (an exported tree): nothing to compare
		}
		at, subject, _ := strings.Cut(last, " ")
		last = at + " (" + strings.TrimSpace(strings.TrimSuffix(subject, "..")) + "...)"
		if _, err := git(root, "merge-base", "--is-ancestor", at, run["commit"]); err == nil {
			continue
		}
		out = append(out, fmt.Sprintf("docs/results/%s.txt (commit %s) is older than %s: run make %s", suite, run["commit"], last, suite))
	}
	sort.Strings(out)
	return out, nil
}

func git(root string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	b, err := cmd.Output()
	return strings.TrimSpace(string(b)), err
}
