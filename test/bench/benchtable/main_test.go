package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestTables(t *testing.T) {
	in := strings.Join([]string{
		"goos: linux",
		"BenchmarkStall/ctrs=1000/upstream-2   1   225.8 max-ms   122.2 p50-ms",
		"BenchmarkStall/ctrs=1000/ours-2       1   3.1 max-ms     0.2 p50-ms   1.5 gate-held-ms",
		"BenchmarkCreate/plugins=1/ours-2   5000   250000 ns/op   8000 B/op   120 allocs/op",
		"PASS",
	}, "\n")
	var out bytes.Buffer
	if err := run(strings.NewReader(in), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	want := `
### BenchmarkStall

| case | p50-ms | max-ms | gate-held-ms |
|---|---:|---:|---:|
| ctrs=1000/upstream | 122.2 | 225.8 | – |
| ctrs=1000/ours | 0.2 | 3.1 | 1.5 |

### BenchmarkCreate

| case | ns/op | B/op | allocs/op |
|---|---:|---:|---:|
| plugins=1/ours | 250000 | 8000 | 120 |
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
