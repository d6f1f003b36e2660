// Command housefigures measures how spread out a package is (issue 43),
// the same way each time, so that a before and an after can be compared:
//
//	go run ./hack/housefigures [-v] [DIR]   (DIR: ./pkg/adaptation)
//
// It prints, for the package's non-test files and then its test files,
// the number of files and lines, and for the non-test files:
//   - comment density: lines whose first non-blank text is "//", over all lines;
//   - references: distinct (from file, to file) pairs where the first file
//     uses an identifier (type, function, method, field, variable, constant)
//     declared in the second;
//   - running back up: pairs of files that reference each other. Whichever
//     way the package's layers are drawn, one of the two references of such a
//     pair runs upward, so this is the fewest upward references any layer
//     order can have, and needs no order declared;
//   - file names in comments: names of .go files in comment lines, and those
//     naming no file of the package's directory (stale, or another package's).
//
// For the test files it prints how many are not named after a file of the
// package (x_test.go without x.go: helpers, fuzzing, benchmarks, and tests
// named after history).
//
// With -v it lists the mutual pairs, the names of missing files and the
// test files not named after one.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	verbose := flag.Bool("v", false, "list the files that reference each other")
	flag.Parse()
	dir := "./pkg/adaptation"
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	if err := run(dir, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "housefigures:", err)
		os.Exit(1)
	}
}

func run(dir string, verbose bool) error {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo}
	pkgs, err := packages.Load(cfg, dir)
	if err != nil {
		return err
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		return fmt.Errorf("%s: want one package that loads cleanly, got %d (%v)", dir, len(pkgs), pkgs[0].Errors)
	}
	p := pkgs[0]

	files, lines, comments, named, err := count(p.GoFiles)
	if err != nil {
		return err
	}
	testFiles, err := filepath.Glob(filepath.Join(filepath.Dir(p.GoFiles[0]), "*_test.go"))
	if err != nil {
		return err
	}
	tfiles, tlines, _, _, err := count(testFiles)
	if err != nil {
		return err
	}

	var missing []string
	for _, n := range named {
		if _, err := os.Stat(filepath.Join(filepath.Dir(p.GoFiles[0]), n[1])); err != nil {
			missing = append(missing, n[0]+": "+n[1])
		}
	}

	var unnamed []string
	for _, t := range testFiles {
		if _, err := os.Stat(strings.TrimSuffix(t, "_test.go") + ".go"); err != nil {
			unnamed = append(unnamed, filepath.Base(t))
		}
	}

	refs := references(p)
	var mutual []string
	for r := range refs {
		if r[0] < r[1] && refs[[2]string{r[1], r[0]}] {
			mutual = append(mutual, r[0]+" <-> "+r[1])
		}
	}
	sort.Strings(mutual)

	fmt.Printf("package %s (%s)\n", p.PkgPath, dir)
	fmt.Printf("files %d, lines %d (tests: files %d, lines %d)\n", files, lines, tfiles, tlines)
	fmt.Printf("test files not named after a file of the package %d\n", len(unnamed))
	fmt.Printf("comment lines %d of %d: %.1f %%\n", comments, lines, 100*float64(comments)/float64(lines))
	fmt.Printf("names of .go files in comments %d, of files not in %s %d\n", len(named), dir, len(missing))
	fmt.Printf("file-to-file references %d, running back up (files referencing each other) %d\n", len(refs), len(mutual))
	if verbose {
		for _, m := range mutual {
			fmt.Println("  " + m)
		}
		for _, m := range missing {
			fmt.Println("  missing " + m)
		}
		for _, u := range unnamed {
			fmt.Println("  test file " + u)
		}
	}
	return nil
}

var goFileRE = regexp.MustCompile(`[\w./-]*\b\w+\.go\b`)

// count returns the number of files, their lines and their comment lines,
// and each name of a .go file in a comment line (file, name).
func count(paths []string) (files, lines, comments int, named [][2]string, err error) {
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, 0, 0, nil, err
		}
		files++
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			lines++
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "//") {
				comments++
				for _, n := range goFileRE.FindAllString(l, -1) {
					named = append(named, [2]string{filepath.Base(path), n})
				}
			}
		}
	}
	return files, lines, comments, named, nil
}

// references returns the distinct (from file, to file) pairs of p's files
// where the first uses an object declared in the second. TypesInfo.Uses
// holds every use, a selector's field or method included.
func references(p *packages.Package) map[[2]string]bool {
	refs := map[[2]string]bool{}
	for id, obj := range p.TypesInfo.Uses {
		if obj.Pkg() != p.Types || !obj.Pos().IsValid() {
			continue // another package's, or built in
		}
		from := filepath.Base(p.Fset.Position(id.Pos()).Filename)
		if to := filepath.Base(p.Fset.Position(obj.Pos()).Filename); to != from {
			refs[[2]string{from, to}] = true
		}
	}
	return refs
}
