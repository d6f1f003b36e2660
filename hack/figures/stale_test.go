package main

import (
	"os/exec"
	"strings"
	"testing"
)

func TestStaleResultsNamesARunOlderThanItsCode(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	write := func(name, text string) { writeFile(t, root, name, text) }
	run("init", "-q")
	write("pkg/a.go", "package a\n")
	run("add", ".")
	run("commit", "-q", "-m", "code")
	measured := run("rev-parse", "--short", "HEAD")
	write("docs/results/bench.txt", "commit "+measured+"\nx 1\n")
	write("pkg/a_test.go", "package a\n") // a test measures nothing
	write("pkg/README.md", "# a\n")       // nor does a document
	run("add", ".")
	run("commit", "-q", "-m", "results and a test")
	if got, err := staleResults(root); err != nil || len(got) != 0 {
		t.Fatalf("fresh results listed: %q, %v", got, err)
	}
	write("pkg/a.go", "package a\n\nconst B = 1\n")
	run("commit", "-q", "-am", "the code moves on")
	got, err := staleResults(root)
	if err != nil || len(got) != 1 || !strings.Contains(got[0], "bench.txt (commit "+measured+")") || !strings.Contains(got[0], "the code moves on") {
		t.Fatalf("stale results: %q, %v", got, err)
	}
}
