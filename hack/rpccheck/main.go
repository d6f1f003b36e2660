// Command rpccheck guards the RPC signatures of the NRI wire API.
//
// buf's WIRE rule set rejects every change of an RPC's request or response
// type, including Empty turning into a new message, which old peers cannot
// notice. make check-wire therefore switches those two buf rules off and runs
// this instead: a changed type passes only if the new message holds every
// field of the old one under the same number and with the same type.
//
// Usage:
//
//	rpccheck -old upstream.binpb -new ours.binpb
//
// It also requires every field that the new API adds to a message of the old
// one (or to a type that replaces an old RPC type) to be numbered in
// -additions, 1000-1099 by default: the block proto/api.proto reserves for our
// additions so that upstream's next field numbers never meet ours.
//
// Both inputs are FileDescriptorSets (or buf images, which decode as one),
// e.g. from `buf build -o` or `protoc --include_imports --descriptor_set_out`.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	oldPath := flag.String("old", "", "descriptor set of the API old peers speak")
	newPath := flag.String("new", "", "descriptor set of our API")
	additions := fieldRange{lo: 1000, hi: 1099}
	flag.Var(&additions, "additions", "field numbers (LO-HI) allowed for fields added to old messages")
	flag.Parse()
	if *oldPath == "" || *newPath == "" {
		fmt.Fprintln(os.Stderr, "rpccheck: both -old and -new are required")
		os.Exit(2)
	}
	oldAPI, err := loadFiles(*oldPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rpccheck: %v\n", err)
		os.Exit(2)
	}
	newAPI, err := loadFiles(*newPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rpccheck: %v\n", err)
		os.Exit(2)
	}
	r := compareAPIs(oldAPI, newAPI, additions)
	printReport(os.Stdout, r)
	if r.failed() {
		os.Exit(1)
	}
}

func loadFiles(path string) (*protoregistry.Files, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read descriptor set: %w", err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("decode descriptor set %s: %w", path, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("link descriptor set %s: %w", path, err)
	}
	return files, nil
}

func printReport(w io.Writer, r report) {
	for _, p := range r.problems {
		fmt.Fprintf(w, "rpccheck: FAIL %s\n", p)
	}
	for _, c := range r.changes {
		verdict := "ok  "
		if len(c.problems) > 0 {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "rpccheck: %s %s %s type %s -> %s\n", verdict, c.method, c.side, c.oldType, c.newType)
		for _, p := range c.problems {
			fmt.Fprintf(w, "rpccheck:        %s\n", p)
		}
	}
	if !r.failed() {
		fmt.Fprintf(w, "rpccheck: %d changed RPC signature(s), all wire-compatible\n", len(r.changes))
	}
}
