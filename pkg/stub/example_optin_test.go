package stub_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// handoverHelpers only do something for a plugin that opted in: an example
// that shows them without WithHandover, copied as is, behaves as upstream's
// plugin and never sees a takeover, a standby or a superseded shutdown.
var handoverHelpers = map[string]bool{
	"SyncInfoFrom": true, "ShutdownError": true, "ErrSuperseded": true,
	"ReadyzHandler": true, "WithReadyFile": true, "WaitReady": true,
}

// TestExamplesOptIn: every godoc example of this package that uses a
// handover helper calls stub.WithHandover().
func TestExamplesOptIn(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	examples := 0
	for _, pkg := range pkgs {
		for name, f := range pkg.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") {
					continue
				}
				examples++
				var helpers []string
				optIn := false
				ast.Inspect(fn, func(n ast.Node) bool {
					var id string
					switch n := n.(type) {
					case *ast.SelectorExpr:
						id = n.Sel.Name
					default:
						return true
					}
					if id == "WithHandover" {
						optIn = true
					}
					if handoverHelpers[id] {
						helpers = append(helpers, id)
					}
					return true
				})
				if len(helpers) > 0 && !optIn {
					t.Errorf("%s: %s uses %v but never calls stub.WithHandover(): copied as is, the plugin behaves as upstream's",
						name, fn.Name.Name, helpers)
				}
			}
		}
	}
	if examples == 0 {
		t.Fatal("no example found")
	}
}
