package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// handoverFile is the hand-written file of a stand-in package that forwards
// what our package adds to upstream's API (the generator forwards only
// upstream's names), so that a plugin importing github.com/containerd/nri
// can opt into handover.
const handoverFile = "handover.go"

// notForwarded are additions the stand-in deliberately leaves out, and why.
var notForwarded = map[string]string{
	"api.File_api_proto": "our file descriptor; upstream's is File_pkg_api_api_proto, which the stand-in lacks too",
}

// TestHandoverAdditionsForwarded: each stand-in package's handover.go
// declares every exported identifier our package has and upstream's lacks,
// and nothing upstream has (the generated file forwards those), so that the
// two files neither miss nor duplicate a name.
func TestHandoverAdditionsForwarded(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pairs := []struct{ upstream, ours, short string }{
		{"pkg/api", "api", "api"},
		{"pkg/stub", "pkg/stub", "stub"},
	}
	var patterns []string
	for _, p := range pairs {
		patterns = append(patterns, upstreamModule+"/"+p.upstream, ourModule+"/"+p.ours)
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: root,
		Env: append(os.Environ(), "GOWORK=off", "GOOS=linux")}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*packages.Package{}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			t.Fatalf("loading %s: %v", p.PkgPath, p.Errors[0])
		}
		byPath[p.PkgPath] = p
	}
	for _, pair := range pairs {
		up := byPath[upstreamModule+"/"+pair.upstream].Types.Scope()
		ours := byPath[ourModule+"/"+pair.ours].Types.Scope()
		path := filepath.Join(root, standinDir, pair.upstream, handoverFile)
		declared, err := topLevelNames(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range ours.Names() {
			if !ast.IsExported(name) || up.Lookup(name) != nil || notForwarded[pair.short+"."+name] != "" {
				continue
			}
			if !declared[name] {
				t.Errorf("%s: %s.%s is ours and not upstream's: forward it here, or the stand-in's plugins cannot use it", path, pair.short, name)
			}
		}
		for name := range declared {
			switch {
			case up.Lookup(name) != nil:
				t.Errorf("%s: %s is upstream's too, so the generated file forwards it: remove it here", path, name)
			case ours.Lookup(name) == nil:
				t.Errorf("%s: %s is not in our package", path, name)
			}
		}
	}
}

// TestHandoverAdditionsDocumented: go doc under the stand-in's import path
// shows only these files' comments, so each forwarded name says what it does
// (its own comment, or its group's) and points at our package's full doc.
func TestHandoverAdditionsDocumented(t *testing.T) {
	for _, pkg := range []string{"pkg/api", "pkg/stub"} {
		path := filepath.Join("..", "..", standinDir, pkg, handoverFile)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		check := func(name string, own, decl *ast.CommentGroup) {
			if !ast.IsExported(name) {
				return
			}
			if own == nil && decl == nil {
				t.Errorf("%s: %s has no doc comment: say what it does, for go doc", path, name)
			}
			if decl == nil || !strings.Contains(decl.Text(), "github.com/nri-handover/nri/") {
				t.Errorf("%s: the doc of %s does not point at our package's full doc (github.com/nri-handover/nri/...)", path, name)
			}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				check(d.Name.Name, nil, d.Doc)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						check(spec.Name.Name, spec.Doc, d.Doc)
					case *ast.ValueSpec:
						own := spec.Doc
						if own == nil {
							own = spec.Comment
						}
						for _, n := range spec.Names {
							check(n.Name, own, d.Doc)
						}
					}
				}
			}
		}
	}
}

// topLevelNames lists the exported names a Go file declares at top level.
func topLevelNames(path string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	add := func(id *ast.Ident) {
		if id.IsExported() {
			names[id.Name] = true
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				add(d.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					add(s.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						add(n)
					}
				}
			}
		}
	}
	return names, nil
}
