// Command nri-depcheck tells a plugin's author whether its binaries link
// two NRI APIs: this module's (github.com/nri-handover/nri/api) and
// upstream's github.com/containerd/nri/pkg/api. Both register the same
// protobuf names, so such a binary builds and then cannot start. It happens
// when a plugin imports this module's pkg/stub and keeps upstream's pkg/api
// (or a library that imports it) without pointing github.com/containerd/nri
// at the stand-in (containerd-nri/). Run it in the plugin's module:
//
//	go run github.com/nri-handover/nri/cmd/nri-depcheck [packages]
//
// (default ./...). It exits 0 when every binary links at most one API, 1
// naming the packages that bring in each API otherwise, 2 when go list fails.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

const (
	oursAPI     = "github.com/nri-handover/nri/api"
	upstreamAPI = "github.com/containerd/nri/pkg/api"
)

type pkg struct {
	ImportPath string
	Imports    []string
	Module     *struct {
		Path, Version string
		Replace       *struct{ Path, Version string }
	}
}

func main() {
	patterns := os.Args[1:]
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	for _, p := range patterns {
		if strings.HasPrefix(p, "-") {
			fmt.Fprintln(os.Stderr, "usage: nri-depcheck [packages] (default ./...), run in the plugin's module")
			os.Exit(2)
		}
	}
	pkgs, err := list(patterns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nri-depcheck:", err)
		os.Exit(2)
	}
	if msg := check(pkgs); msg != "" {
		fmt.Fprint(os.Stderr, msg)
		os.Exit(1)
	}
	fmt.Println("nri-depcheck: ok, no binary links two NRI APIs")
}

// list runs go list -deps over patterns, with test dependencies: a test
// binary that links both APIs fails as a plugin does.
func list(patterns []string) ([]pkg, error) {
	args := append([]string{"list", "-e", "-deps", "-test", "-json=ImportPath,Imports,Module", "--"}, patterns...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// check returns what to tell the author, or "" when at most one API is
// linked. The stand-in's pkg/api imports ours; upstream's does not.
func check(pkgs []pkg) string {
	byPath := map[string]pkg{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	up, ok := byPath[upstreamAPI]
	if !ok || contains(up.Imports, oursAPI) {
		return ""
	}
	if _, ok := byPath[oursAPI]; !ok {
		return ""
	}
	// Who brings each in: the packages outside each API's own module that
	// import it directly, and the plugin's packages that import this module.
	var viaUp, viaOurs []string
	seen := map[string]bool{}
	for _, p := range pkgs {
		name, _, _ := strings.Cut(p.ImportPath, " ") // a test variant repeats its package
		if seen[name] {
			continue
		}
		seen[name] = true
		for _, imp := range p.Imports {
			imp, _, _ = strings.Cut(imp, " ")
			switch {
			case imp == upstreamAPI && !strings.HasPrefix(name, "github.com/containerd/nri/"):
				viaUp = append(viaUp, name)
			case strings.HasPrefix(imp, "github.com/nri-handover/nri/") && !strings.HasPrefix(name, "github.com/nri-handover/nri/") &&
				!strings.HasPrefix(name, "github.com/containerd/nri/"):
				viaOurs = append(viaOurs, name+" ("+imp+")")
			}
		}
	}
	sort.Strings(viaUp)
	sort.Strings(viaOurs)
	version := "?"
	if up.Module != nil {
		version = up.Module.Version
	}
	var b strings.Builder
	fmt.Fprintf(&b, "nri-depcheck: these packages link two NRI APIs, which register the same protobuf names: the binary builds and then cannot start.\n")
	fmt.Fprintf(&b, "  upstream's %s (github.com/containerd/nri %s, not the stand-in), imported by: %s\n", upstreamAPI, version, strings.Join(viaUp, ", "))
	fmt.Fprintf(&b, "  %s, through: %s\n", oursAPI, strings.Join(viaOurs, ", "))
	fmt.Fprintf(&b, "Fix: import only github.com/containerd/nri/... and point it at the stand-in in go.mod:\n")
	fmt.Fprintf(&b, "  replace github.com/containerd/nri => /path/to/nri-handover/containerd-nri\n")
	fmt.Fprintf(&b, "  replace github.com/nri-handover/nri => /path/to/nri-handover\n")
	fmt.Fprintf(&b, "(nri-handover's README, \"For plugin authors\"), then go mod tidy.\n")
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
