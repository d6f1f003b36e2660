// Command standin-api fails when the stand-in module (containerd-nri, module
// github.com/containerd/nri) lacks a package or an exported identifier of
// upstream containerd/nri at the version go.mod pins: a runtime or plugin
// written for upstream that uses it would not build on ours.
//
// It lists upstream's packages from the module cache (every directory with
// Go files, but internal packages and commands, which nothing can import),
// loads them and the stand-in's with go/packages, and compares, per
// package: the exported top-level identifiers and their kind, and for every
// exported type the exported fields and methods reachable from it (an alias
// of our type must carry upstream's methods too). Only names are compared,
// not signatures: the generated forwarders and the builds of real runtimes
// (containerd, CRI-O) check those.
//
// The few identifiers the stand-in leaves out are listed in exceptions, each
// with its reason; containerd-nri/README.md repeats them.
//
// Usage (from the repository root):
//
//	go run ./hack/standin-api [-standin DIR]
//
// hack/check-standin-api-negative.sh runs it on altered copies of the
// stand-in, which it must reject.
package main

import (
	"flag"
	"fmt"
	"go/types"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

const upstreamModule = "github.com/containerd/nri"

// wasmHost is the reason for leaving out upstream's WASM plugin host.
const wasmHost = "WASM plugin host (wazero): only upstream's adaptation loads WASM plugins, " +
	"ours does not, and providing it would add wazero to every runtime's dependencies"

// exceptions maps "pkg.Identifier" (or "pkg.Type.Member") to why the
// stand-in leaves it out.
var exceptions = map[string]string{
	"pkg/api.DefaultWazeroRuntime": wasmHost,
	"pkg/api.NewPluginPlugin":      wasmHost,
	"pkg/api.PluginPlugin":         wasmHost,
	"pkg/api.WazeroConfig":         wasmHost,
	"pkg/api.WazeroModuleConfig":   wasmHost,
	"pkg/api.WazeroNewRuntime":     wasmHost,
	"pkg/api.WazeroRuntime":        wasmHost,
}

func main() {
	standin := flag.String("standin", "containerd-nri", "the stand-in module's directory")
	list := flag.Bool("list", false, "print upstream's packages and the exceptions, then check")
	flag.Parse()
	n, err := run(*standin, *list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin-api:", err)
		os.Exit(1)
	}
	fmt.Printf("standin-api: %s has the %d exported identifiers and members of upstream's packages but the %d documented exceptions\n",
		*standin, n-skipped, skipped)
}

func run(standinDir string, list bool) (int, error) {
	upDir, err := moduleDir()
	if err != nil {
		return 0, err
	}
	rels, err := upstreamPackages(upDir)
	if err != nil {
		return 0, err
	}
	if list {
		fmt.Println("upstream packages:", strings.Join(rels, " "))
	}
	var upPatterns, inPatterns []string
	for _, r := range rels {
		upPatterns = append(upPatterns, path(r))
		inPatterns = append(inPatterns, "./"+r)
	}
	env := append(os.Environ(), "GOWORK=off", "GOOS=linux", "GOARCH=amd64")
	mode := packages.NeedName | packages.NeedFiles | packages.NeedTypes
	ups, err := load(&packages.Config{Mode: mode, Env: env}, upPatterns)
	if err != nil {
		return 0, fmt.Errorf("loading upstream: %w", err)
	}
	abs, err := filepath.Abs(standinDir)
	if err != nil {
		return 0, err
	}
	// The stand-in's own go.mod and the main module's cache: offline.
	ins, err := load(&packages.Config{Mode: mode, Dir: abs,
		Env: append(env, "GOFLAGS=-mod=mod", "GOPROXY=off")}, existing(abs, rels, inPatterns))
	if err != nil {
		return 0, fmt.Errorf("loading the stand-in: %w", err)
	}

	var problems []string
	count := 0
	for _, r := range rels {
		up := ups[path(r)]
		in := ins[path(r)]
		if in == nil {
			problems = append(problems, fmt.Sprintf("package %s: missing from the stand-in", r))
			continue
		}
		c, p := compare(r, up.Types, in.Types)
		count += c
		problems = append(problems, p...)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, p)
		}
		return count, fmt.Errorf("%d upstream identifier(s) missing from the stand-in %s", len(problems), standinDir)
	}
	return count, nil
}

func path(rel string) string {
	if rel == "." {
		return upstreamModule
	}
	return upstreamModule + "/" + rel
}

// moduleDir is upstream's directory in the module cache, at go.mod's version.
func moduleDir() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", upstreamModule)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating %s: %w", upstreamModule, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("%s is not in the module cache: go mod download %s", upstreamModule, upstreamModule)
	}
	return dir, nil
}

// upstreamPackages lists upstream's importable packages, relative to the
// module: internal packages and commands (package main) are left out, as
// nothing outside the module can import them.
func upstreamPackages(dir string) ([]string, error) {
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if p != dir && (base == "internal" || base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
				return filepath.SkipDir
			}
			if p != dir {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || seen[rel] {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if isMain(string(src)) {
			return nil
		}
		seen[rel] = true
		return nil
	})
	var rels []string
	for r := range seen {
		rels = append(rels, r)
	}
	sort.Strings(rels)
	return rels, err
}

// isMain tells whether a Go file declares package main.
func isMain(src string) bool {
	for _, line := range strings.Split(src, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "package" {
			return f[1] == "main"
		}
	}
	return false
}

// existing keeps the patterns whose directory the stand-in has: a missing
// package is reported as such, not as a load error.
func existing(dir string, rels, patterns []string) []string {
	var out []string
	for i, r := range rels {
		if st, err := os.Stat(filepath.Join(dir, r)); err == nil && st.IsDir() {
			out = append(out, patterns[i])
		}
	}
	return out
}

func load(cfg *packages.Config, patterns []string) (map[string]*packages.Package, error) {
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	m := map[string]*packages.Package{}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("%s: %v", p.PkgPath, p.Errors[0])
		}
		if p.Types != nil && len(p.GoFiles) == 0 && p.Types.Scope().Len() == 0 {
			continue // a directory without a package
		}
		m[p.PkgPath] = p
	}
	return m, nil
}

// compare returns how many upstream identifiers it checked and the ones the
// stand-in lacks.
func compare(rel string, up, in *types.Package) (int, []string) {
	var problems []string
	count := 0
	for _, name := range up.Scope().Names() {
		uobj := up.Scope().Lookup(name)
		if !uobj.Exported() {
			continue
		}
		count++
		if excepted(rel, name, "") {
			continue
		}
		iobj := in.Scope().Lookup(name)
		if iobj == nil {
			problems = append(problems, fmt.Sprintf("%s: %s %s: missing", rel, kind(uobj), name))
			continue
		}
		if kind(uobj) != kind(iobj) {
			problems = append(problems, fmt.Sprintf("%s: %s %s: is a %s in the stand-in", rel, kind(uobj), name, kind(iobj)))
			continue
		}
		if tn, ok := uobj.(*types.TypeName); ok {
			for _, m := range members(tn.Type()) {
				count++
				if excepted(rel, name, m) {
					continue
				}
				if o, _, _ := types.LookupFieldOrMethod(iobj.Type(), true, in, m); o == nil {
					problems = append(problems, fmt.Sprintf("%s: %s.%s: missing", rel, name, m))
				}
			}
		}
	}
	return count, problems
}

// members lists the exported fields and methods of t, promoted ones
// included, that a caller can reach through a value or pointer of t.
func members(t types.Type) []string {
	seen := map[string]bool{}
	ms := types.NewMethodSet(types.NewPointer(t))
	if types.IsInterface(t) {
		ms = types.NewMethodSet(t)
	}
	for i := 0; i < ms.Len(); i++ {
		if o := ms.At(i).Obj(); o.Exported() {
			seen[o.Name()] = true
		}
	}
	var fields func(types.Type, int)
	fields = func(t types.Type, depth int) {
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		s, ok := t.Underlying().(*types.Struct)
		if !ok || depth > 5 {
			return
		}
		for i := 0; i < s.NumFields(); i++ {
			f := s.Field(i)
			if f.Exported() {
				seen[f.Name()] = true
			}
			if f.Embedded() {
				fields(f.Type(), depth+1)
			}
		}
	}
	fields(t, 0)
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// excepted tells whether exceptions lists pkg.name (member "") or
// pkg.name.member, and counts what it skips.
func excepted(rel, name, member string) bool {
	key := rel + "." + name
	if member != "" {
		key += "." + member
	}
	if _, ok := exceptions[key]; !ok {
		return false
	}
	skipped++
	return true
}

// skipped counts the identifiers and members left out as documented.
var skipped int

// kind is the keyword that declares o.
func kind(o types.Object) string {
	switch o.(type) {
	case *types.TypeName:
		return "type"
	case *types.Const:
		return "const"
	case *types.Var:
		return "var"
	case *types.Func:
		return "func"
	}
	return "?"
}
