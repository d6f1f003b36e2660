// Command dirhash prints the go.sum hash ("h1:...") of a directory holding a
// module's files, as the Go command computes it for the module's zip, so that
// a copy of a module's source can be checked against the published module.
//
// Usage: dirhash DIR MODULE@VERSION
package main

import (
	"fmt"
	"os"

	"golang.org/x/mod/sumdb/dirhash"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: dirhash DIR MODULE@VERSION")
		os.Exit(2)
	}
	h, err := dirhash.HashDir(os.Args[1], os.Args[2], dirhash.Hash1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dirhash:", err)
		os.Exit(1)
	}
	fmt.Println(h)
}
