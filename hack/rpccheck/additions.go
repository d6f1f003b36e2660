package main

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// fieldRange is the block of field numbers reserved for the fields the new
// API adds to the old API's messages. Upstream numbers its fields from 1 up,
// so additions taken from its next numbers would one day collide with a field
// of its own, and old and new peers would misread each other silently.
type fieldRange struct {
	lo, hi protoreflect.FieldNumber
}

func (fr fieldRange) contains(n protoreflect.FieldNumber) bool {
	return fr.lo <= n && n <= fr.hi
}

func (fr *fieldRange) String() string {
	return fmt.Sprintf("%d-%d", fr.lo, fr.hi)
}

// Set parses "LO-HI" for the -additions flag.
func (fr *fieldRange) Set(s string) error {
	var lo, hi int32
	if _, err := fmt.Sscanf(s, "%d-%d", &lo, &hi); err != nil {
		return fmt.Errorf("want LO-HI, got %q: %w", s, err)
	}
	r := fieldRange{lo: protoreflect.FieldNumber(lo), hi: protoreflect.FieldNumber(hi)}
	if !r.lo.IsValid() || !r.hi.IsValid() || r.lo > r.hi {
		return fmt.Errorf("%q is not a range of valid field numbers", s)
	}
	*fr = r
	return nil
}

// checkAddedFields lists every field that a message of the new API has beyond
// the same-named message of the old API and that lies outside additions.
// Nested messages count as messages of their own; messages only the new API
// has are free to number their fields as they like.
func checkAddedFields(oldAPI, newAPI *protoregistry.Files, additions fieldRange) []string {
	var problems []string
	var walk func(msgs protoreflect.MessageDescriptors)
	walk = func(msgs protoreflect.MessageDescriptors) {
		for i := 0; i < msgs.Len(); i++ {
			oldMsg := msgs.Get(i)
			if d, err := newAPI.FindDescriptorByName(oldMsg.FullName()); err == nil {
				if newMsg, ok := d.(protoreflect.MessageDescriptor); ok {
					problems = append(problems, strayFields(oldMsg, newMsg, additions)...)
				}
			}
			walk(oldMsg.Messages())
		}
	}
	oldAPI.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		walk(f.Messages())
		return true
	})
	return problems
}

// strayFields lists the fields of newMsg whose number oldMsg does not use and
// that lie outside additions.
func strayFields(oldMsg, newMsg protoreflect.MessageDescriptor, additions fieldRange) []string {
	var problems []string
	fields := newMsg.Fields()
	for i := 0; i < fields.Len(); i++ {
		nf := fields.Get(i)
		if oldMsg.Fields().ByNumber(nf.Number()) != nil || additions.contains(nf.Number()) {
			continue
		}
		problems = append(problems, fmt.Sprintf("field %d (%s) of %s is added to %s outside %s, the numbers reserved for additions",
			nf.Number(), nf.Name(), newMsg.FullName(), oldMsg.FullName(), additions.String()))
	}
	return problems
}
