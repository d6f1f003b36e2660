package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The repository's documents quote their runs' figures as the runs wrote
// them.
func TestDocumentsQuoteTheirRuns(t *testing.T) {
	n, err := check(filepath.Join("..", ".."))
	if err != nil {
		t.Fatalf("%v\n(after a run, `go run ./hack/figures -fill` writes its figures into the documents)", err)
	}
	t.Logf("%d quoted figures match their runs", n)
}

func TestCheckFindsEveryKindOfMismatch(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) { writeFile(t, root, name, text) }
	write("docs/results/e2e-x.txt", "# run\ncommit abc123\nA.passed 82\nop.maxMs 7.61\nboth 35 of 35\nlost 0 of 20 (no update carries them)\n")
	write("README.md", "| A 82<!--fig e2e-x A.passed--> | **7.61**<!--fig e2e-x op.maxMs--> ms (**35 of 35**<!--fig e2e-x both-->) |\n"+
		"| 0 of 20 (no update carries them)<!--fig e2e-x lost--> |\n")
	if n, err := check(root); err != nil || n != 4 {
		t.Fatalf("matching figures: %d checked, %v", n, err)
	}
	write("docs/a.md", "A 81<!--fig e2e-x A.passed-->, (B 3<!--fig e2e-x B.passed-->), 5<!--fig e2e-y A.passed-->\n58 checks (to be regenerated)\n")
	_, err := check(root)
	if err == nil {
		t.Fatal("mismatches not found")
	}
	for _, want := range []string{
		`docs/a.md:1: e2e-x A.passed is "81" here and "82" in its run (commit abc123)`,
		`docs/a.md:1: docs/results/e2e-x.txt has no B.passed`,
		`docs/a.md:1: A.passed quotes a run with no results (docs/results/e2e-y.txt)`,
		`docs/a.md:2: a figure "to be regenerated"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	write("pkg/x.go", "package x\n\n// doc\nfunc f() {}\n")
	write("docs/a.md", "x.go has 3<!--fig loc pkg/x.go--> lines\n")
	if _, err := check(root); err == nil || !strings.Contains(err.Error(), `loc pkg/x.go is "3" here and "2" in its run`) {
		t.Errorf("a line count that differs from the source: %v", err)
	}
	write("docs/a.md", "x.go has 2<!--fig loc pkg/x.go--> lines\n")
	if _, err := check(root); err != nil {
		t.Errorf("a line count that matches the source: %v", err)
	}
	write("docs/results/e2e-z.txt", "A.passed 1\n")
	if _, err := check(root); err == nil || !strings.Contains(err.Error(), "no commit line") {
		t.Errorf("a results file without a commit: %v", err)
	}
}

func TestFillWritesEachRunsFigure(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"docs/results/e2e-x.txt": "commit abc123\nA.passed 82\nop.maxMs 7.61\nboth 35 of 35\n",
		"README.md":              "| A ?<!--fig e2e-x A.passed--> | **7.0**<!--fig e2e-x op.maxMs--> ms, 3<!--fig e2e-x none--> | (1 of 2<!--fig e2e-x both-->) |\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := fillIn(root); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(root, "README.md"))
	if want := "| A 82<!--fig e2e-x A.passed--> | **7.61**<!--fig e2e-x op.maxMs--> ms, 3<!--fig e2e-x none--> | (35 of 35<!--fig e2e-x both-->) |\n"; string(b) != want {
		t.Errorf("filled:\n%s\nwant:\n%s", b, want)
	}
}

// writeFile writes text to name under root, making its folders.
func writeFile(t *testing.T, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
