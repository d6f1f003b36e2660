// Command standin-gen writes the forwarding packages of the stand-in module
// containerd-nri (module github.com/containerd/nri), which lets a
// runtime built for upstream containerd/nri (containerd v2.4.2) build on this
// module unchanged, through a Go workspace.
//
// For each package pair below it loads upstream's package (the version
// go.mod pins: the specification) and ours, and writes a file that declares
// every exported identifier of upstream's package that ours also has, as an
// alias (types), a constant, a variable initialised from ours, or a function
// forwarding to ours. Identifiers upstream has and ours lacks are listed in
// the file and printed: a runtime using one fails to build, which is the
// honest outcome. Nothing of upstream's code is copied; only names are read.
//
// Usage (from the repository root):
//
//	go run ./hack/standin-gen          rewrite the generated files
//	go run ./hack/standin-gen -check   fail if any is out of date
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

const (
	upstreamModule = "github.com/containerd/nri"
	ourModule      = "github.com/nri-handover/nri"
	standinDir     = "containerd-nri"
	genFile        = "zz_generated_forward.go"
)

// pairs maps each stand-in package (a path inside upstream's module) to ours.
var pairs = []struct{ upstream, ours string }{
	{"pkg/api", "api"},
	{"pkg/adaptation", "pkg/adaptation"},
	{"pkg/stub", "pkg/stub"},
	{"pkg/log", "pkg/log"},
	{"pkg/net", "pkg/net"},
	{"pkg/net/multiplex", "pkg/net/multiplex"},
	{"pkg/runtime-tools/generate", "pkg/runtime-tools/generate"},
	{"plugins/default-validator", "plugins/default-validator"},
	{"plugins/default-validator/builtin", "plugins/default-validator/builtin"},
	{"pkg/adaptation/builtin", "pkg/adaptation/builtin"},
	{"pkg/plugin", "pkg/plugin"},
	{"pkg/version", "pkg/version"},
}

func main() {
	check := flag.Bool("check", false, "fail if a generated file is out of date")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "standin-gen:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	var patterns []string
	for _, p := range pairs {
		patterns = append(patterns, upstreamModule+"/"+p.upstream, ourModule+"/"+p.ours)
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports | packages.NeedDeps,
		Env: append(os.Environ(), "GOWORK=off", "GOOS=linux")}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return err
	}
	byPath := map[string]*packages.Package{}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return fmt.Errorf("loading %s: %v", p.PkgPath, p.Errors[0])
		}
		byPath[p.PkgPath] = p
	}
	stale := 0
	for _, pair := range pairs {
		up, ours := byPath[upstreamModule+"/"+pair.upstream], byPath[ourModule+"/"+pair.ours]
		dir := filepath.Join(standinDir, pair.upstream)
		own, err := handWritten(dir)
		if err != nil {
			return err
		}
		src, missing, err := generate(up.Types, ours.Types, own)
		if err != nil {
			return fmt.Errorf("%s: %w", pair.upstream, err)
		}
		for _, m := range missing {
			if check {
				break // listed in the file; -check only reports staleness
			}
			fmt.Printf("%s: upstream's %s has no counterpart in %s\n", pair.upstream, m, ours.PkgPath)
		}
		path := filepath.Join(dir, genFile)
		old, _ := os.ReadFile(path)
		if bytes.Equal(old, src) {
			continue
		}
		if check {
			fmt.Fprintf(os.Stderr, "%s is out of date\n", path)
			stale++
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			return err
		}
	}
	if stale > 0 {
		return fmt.Errorf("%d generated file(s) out of date: run go run ./hack/standin-gen", stale)
	}
	return nil
}

// file collects one generated file's declarations and imports.
type file struct {
	ours    *types.Package
	imports map[string]string // path -> name
	names   map[string]string // name -> path
}

// qualifier names packages in printed types, importing them as needed; our
// aliased package is "ours", our other forwarded ones their stand-ins.
func (f *file) qualifier(p *types.Package) string {
	if p == f.ours {
		return "ours"
	}
	path := standinPath(p.Path())
	if n, ok := f.imports[path]; ok {
		return n
	}
	name := p.Name()
	for i := 2; f.names[name] != "" || name == "ours"; i++ {
		name = fmt.Sprintf("%s%d", p.Name(), i)
	}
	f.imports[path], f.names[name] = name, path
	return name
}

// standinPath names another of our forwarded packages by its stand-in path,
// so that signatures read as upstream's (WithBuiltinPlugins takes upstream's
// *builtin.BuiltinPlugin); the alias makes it the same type as ours.
func standinPath(path string) string {
	for _, pair := range pairs {
		if path == ourModule+"/"+pair.ours {
			return upstreamModule + "/" + pair.upstream
		}
	}
	return path
}

// handWritten returns the top-level names declared in the stand-in
// package's own files (all but the generated one and tests): identifiers
// our package lacks that the stand-in provides itself, which the generated
// file neither forwards nor lists as missing.
func handWritten(dir string) (map[string]bool, error) {
	names := map[string]bool{}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	fset := token.NewFileSet()
	for _, m := range matches {
		if filepath.Base(m) == genFile || strings.HasSuffix(m, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, m, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", m, err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names, nil
}

func generate(up, ours *types.Package, own map[string]bool) ([]byte, []string, error) {
	f := &file{ours: ours, imports: map[string]string{}, names: map[string]string{}}
	var decls, missing []string
	names := up.Scope().Names() // sorted
	for _, name := range names {
		uobj := up.Scope().Lookup(name)
		if !uobj.Exported() || own[name] {
			continue
		}
		obj := ours.Scope().Lookup(name)
		if obj == nil || !sameKind(uobj, obj) {
			missing = append(missing, describe(uobj))
			continue
		}
		d, err := f.decl(obj)
		if err != nil {
			return nil, nil, err
		}
		decls = append(decls, d)
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by hack/standin-gen from %s. DO NOT EDIT.\n\n", up.Path())
	fmt.Fprintf(&b, "package %s\n\n", up.Name())
	paths := []string{ours.Path()}
	for p := range f.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	b.WriteString("import (\n")
	for _, p := range paths {
		n := "ours"
		if p != ours.Path() {
			n = f.imports[p]
		}
		fmt.Fprintf(&b, "\t%s %q\n", n, p)
	}
	b.WriteString(")\n\n")
	if len(missing) > 0 {
		b.WriteString("// Upstream identifiers without a counterpart in our package (a runtime\n// using one does not build):\n//\n")
		for _, m := range missing {
			fmt.Fprintf(&b, "//\t%s\n", m)
		}
		b.WriteString("\n")
	}
	for _, d := range decls {
		b.WriteString(d)
		b.WriteString("\n")
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, nil, fmt.Errorf("formatting: %w\n%s", err, b.Bytes())
	}
	return src, missing, nil
}

func sameKind(a, b types.Object) bool { return kind(a) == kind(b) }

func describe(o types.Object) string { return kind(o) + " " + o.Name() }

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

func (f *file) decl(obj types.Object) (string, error) {
	name := obj.Name()
	switch o := obj.(type) {
	case *types.TypeName:
		tparams := typeParamsOf(o.Type())
		if tparams == nil || tparams.Len() == 0 {
			return fmt.Sprintf("type %s = ours.%s\n", name, name), nil
		}
		decl, use := f.typeParams(tparams)
		return fmt.Sprintf("type %s%s = ours.%s%s\n", name, decl, name, use), nil
	case *types.Const:
		return fmt.Sprintf("const %s = ours.%s\n", name, name), nil
	case *types.Var:
		// A copy of the value at init: maps, pointers, functions and errors
		// stay shared with ours, which is what callers compare against.
		return fmt.Sprintf("var %s = ours.%s\n", name, name), nil
	case *types.Func:
		sig := o.Type().(*types.Signature)
		decl, use := f.typeParams(sig.TypeParams())
		var params, args []string
		for i := 0; i < sig.Params().Len(); i++ {
			p := sig.Params().At(i)
			arg := fmt.Sprintf("p%d", i)
			typ := types.TypeString(p.Type(), f.qualifier)
			if sig.Variadic() && i == sig.Params().Len()-1 {
				typ = "..." + types.TypeString(p.Type().(*types.Slice).Elem(), f.qualifier)
				arg += "..."
			}
			params = append(params, fmt.Sprintf("p%d %s", i, typ))
			args = append(args, arg)
		}
		results := types.TypeString(sig.Results(), f.qualifier)
		if sig.Results().Len() == 0 {
			results = ""
		} else if sig.Results().Len() == 1 && sig.Results().At(0).Name() == "" {
			results = types.TypeString(sig.Results().At(0).Type(), f.qualifier)
		}
		call := fmt.Sprintf("ours.%s%s(%s)", name, use, strings.Join(args, ", "))
		if sig.Results().Len() > 0 {
			call = "return " + call
		}
		return fmt.Sprintf("func %s%s(%s) %s {\n\t%s\n}\n", name, decl, strings.Join(params, ", "), results, call), nil
	}
	return "", fmt.Errorf("unsupported object %s", obj)
}

func typeParamsOf(t types.Type) *types.TypeParamList {
	switch t := t.(type) {
	case *types.Named:
		return t.TypeParams()
	case *types.Alias:
		return t.TypeParams()
	}
	return nil
}

// typeParams returns "[T C, U D]" and "[T, U]" for a type parameter list.
func (f *file) typeParams(list *types.TypeParamList) (string, string) {
	if list == nil || list.Len() == 0 {
		return "", ""
	}
	var decl, use []string
	for i := 0; i < list.Len(); i++ {
		tp := list.At(i)
		decl = append(decl, tp.Obj().Name()+" "+types.TypeString(tp.Constraint(), f.qualifier))
		use = append(use, tp.Obj().Name())
	}
	return "[" + strings.Join(decl, ", ") + "]", "[" + strings.Join(use, ", ") + "]"
}
