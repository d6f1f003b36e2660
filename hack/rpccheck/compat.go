package main

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// signatureChange is one RPC whose request or response message type differs
// between the old and the new API, with every reason the new type cannot
// stand in for the old one on the wire. No problems means the change is safe.
type signatureChange struct {
	method   protoreflect.FullName
	side     string // "request" or "response"
	oldType  protoreflect.FullName
	newType  protoreflect.FullName
	problems []string
}

// report is what comparing two APIs found: RPCs whose types changed, and
// problems that are not tied to a single changed type (a missing service or
// method, a flipped streaming mode).
type report struct {
	changes  []signatureChange
	problems []string
}

// failed tells whether anything in the report breaks an old peer.
func (r report) failed() bool {
	if len(r.problems) > 0 {
		return true
	}
	for _, c := range r.changes {
		if len(c.problems) > 0 {
			return true
		}
	}
	return false
}

// compareAPIs walks every service of the old API and checks that the new API
// still serves each method with a compatible signature. buf's WIRE rules cover
// everything else; this stands in for the two rules we switch off there
// (RPC_SAME_REQUEST_TYPE, RPC_SAME_RESPONSE_TYPE), which reject any type
// change, even Empty to a new message, although an old peer cannot tell them
// apart on the wire. It also requires every field the new API adds to an old
// message, or to a type that replaces an old one, to be numbered within
// additions (see additions.go).
func compareAPIs(oldAPI, newAPI *protoregistry.Files, additions fieldRange) report {
	r := report{problems: checkAddedFields(oldAPI, newAPI, additions)}
	oldAPI.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		services := f.Services()
		for i := 0; i < services.Len(); i++ {
			compareService(&r, services.Get(i), newAPI, additions)
		}
		return true
	})
	return r
}

func compareService(r *report, oldSvc protoreflect.ServiceDescriptor, newAPI *protoregistry.Files, additions fieldRange) {
	d, err := newAPI.FindDescriptorByName(oldSvc.FullName())
	if err != nil {
		r.problems = append(r.problems, fmt.Sprintf("service %s is gone", oldSvc.FullName()))
		return
	}
	newSvc, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		r.problems = append(r.problems, fmt.Sprintf("%s is no longer a service", oldSvc.FullName()))
		return
	}
	methods := oldSvc.Methods()
	for i := 0; i < methods.Len(); i++ {
		oldM := methods.Get(i)
		newM := newSvc.Methods().ByName(oldM.Name())
		if newM == nil {
			r.problems = append(r.problems, fmt.Sprintf("method %s is gone", oldM.FullName()))
			continue
		}
		if oldM.IsStreamingClient() != newM.IsStreamingClient() || oldM.IsStreamingServer() != newM.IsStreamingServer() {
			r.problems = append(r.problems, fmt.Sprintf("method %s changed its streaming mode", oldM.FullName()))
		}
		compareSide(r, oldM.FullName(), "request", oldM.Input(), newM.Input(), additions)
		compareSide(r, oldM.FullName(), "response", oldM.Output(), newM.Output(), additions)
	}
}

func compareSide(r *report, method protoreflect.FullName, side string, oldMsg, newMsg protoreflect.MessageDescriptor, additions fieldRange) {
	if oldMsg.FullName() == newMsg.FullName() {
		// Same message on both sides: buf's field rules already vet it.
		return
	}
	r.changes = append(r.changes, signatureChange{
		method:  method,
		side:    side,
		oldType: oldMsg.FullName(),
		newType: newMsg.FullName(),
		// The new type stands where old peers send or expect oldMsg, so its
		// extra fields are additions to oldMsg on the wire.
		problems: append(coverFields(oldMsg, newMsg), strayFields(oldMsg, newMsg, additions)...),
	})
}

// coverFields lists every field of oldMsg that newMsg does not carry under the
// same number with the same wire type and value type. A message that covers
// all of them decodes whatever an old peer sends and encodes nothing an old
// peer would misread; for Empty that holds for any message.
func coverFields(oldMsg, newMsg protoreflect.MessageDescriptor) []string {
	var problems []string
	fields := oldMsg.Fields()
	for i := 0; i < fields.Len(); i++ {
		of := fields.Get(i)
		nf := newMsg.Fields().ByNumber(of.Number())
		if nf == nil {
			problems = append(problems, fmt.Sprintf("field %d (%s) of %s is missing from %s",
				of.Number(), of.Name(), oldMsg.FullName(), newMsg.FullName()))
			continue
		}
		if why := fieldMismatch(of, nf); why != "" {
			problems = append(problems, fmt.Sprintf("field %d (%s) of %s is %s in %s: %s",
				of.Number(), of.Name(), oldMsg.FullName(), describe(nf), newMsg.FullName(), why))
		}
	}
	return problems
}

// fieldMismatch says why nf cannot replace of, or "" when it can. Message and
// enum types are compared by full name: a same-named type is the same type in
// both APIs, and buf's field rules check it there.
func fieldMismatch(of, nf protoreflect.FieldDescriptor) string {
	switch {
	case of.IsMap() != nf.IsMap():
		return fmt.Sprintf("was %s", describe(of))
	case of.IsMap():
		if why := fieldMismatch(of.MapKey(), nf.MapKey()); why != "" {
			return "map key " + why
		}
		if why := fieldMismatch(of.MapValue(), nf.MapValue()); why != "" {
			return "map value " + why
		}
		return ""
	case of.Cardinality() != nf.Cardinality():
		return fmt.Sprintf("was %s", describe(of))
	case of.Kind() != nf.Kind():
		return fmt.Sprintf("was %s", describe(of))
	case of.Message() != nil && of.Message().FullName() != nf.Message().FullName():
		return fmt.Sprintf("was %s", describe(of))
	case of.Enum() != nil && of.Enum().FullName() != nf.Enum().FullName():
		return fmt.Sprintf("was %s", describe(of))
	}
	return ""
}

// describe renders a field's shape for messages, e.g. "repeated message
// nri.pkg.api.v1alpha1.ContainerUpdate" or "map<string, string>".
func describe(f protoreflect.FieldDescriptor) string {
	if f.IsMap() {
		return fmt.Sprintf("map<%s, %s>", typeName(f.MapKey()), typeName(f.MapValue()))
	}
	if f.Cardinality() == protoreflect.Repeated {
		return "repeated " + typeName(f)
	}
	return typeName(f)
}

func typeName(f protoreflect.FieldDescriptor) string {
	switch {
	case f.Message() != nil:
		return fmt.Sprintf("%s %s", f.Kind(), f.Message().FullName())
	case f.Enum() != nil:
		return fmt.Sprintf("enum %s", f.Enum().FullName())
	}
	return f.Kind().String()
}
