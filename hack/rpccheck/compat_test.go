package main

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

type fieldSpec struct {
	name   string
	number int32
	typ    descriptorpb.FieldDescriptorProto_Type
	label  descriptorpb.FieldDescriptorProto_Label
	ref    string // type_name for message and enum fields
}

var (
	optional = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	repeated = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	tString  = descriptorpb.FieldDescriptorProto_TYPE_STRING
	tInt64   = descriptorpb.FieldDescriptorProto_TYPE_INT64
	tMessage = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
)

func message(name string, fields ...fieldSpec) *descriptorpb.DescriptorProto {
	m := &descriptorpb.DescriptorProto{Name: proto.String(name)}
	for _, f := range fields {
		fd := &descriptorpb.FieldDescriptorProto{
			Name:   proto.String(f.name),
			Number: proto.Int32(f.number),
			Type:   f.typ.Enum(),
			Label:  f.label.Enum(),
		}
		if f.ref != "" {
			fd.TypeName = proto.String(f.ref)
		}
		m.Field = append(m.Field, fd)
	}
	return m
}

// api builds a one-file API in package t with service S; each rpc is
// "Name(Request)Response", "stream" prefixes mark a streaming client.
func api(t *testing.T, rpcs []string, msgs ...*descriptorpb.DescriptorProto) *protoregistry.Files {
	t.Helper()
	svc := &descriptorpb.ServiceDescriptorProto{Name: proto.String("S")}
	for _, r := range rpcs {
		streaming := strings.HasPrefix(r, "stream ")
		r = strings.TrimPrefix(r, "stream ")
		name, rest, _ := strings.Cut(r, "(")
		in, out, _ := strings.Cut(rest, ")")
		svc.Method = append(svc.Method, &descriptorpb.MethodDescriptorProto{
			Name:            proto.String(name),
			InputType:       proto.String(".t." + in),
			OutputType:      proto.String(".t." + out),
			ClientStreaming: proto.Bool(streaming),
		})
	}
	all := append([]*descriptorpb.DescriptorProto{message("Empty")}, msgs...)
	file := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("t.proto"),
		Package:     proto.String("t"),
		Syntax:      proto.String("proto3"),
		MessageType: all,
		Service:     []*descriptorpb.ServiceDescriptorProto{svc},
	}
	files, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{file}})
	if err != nil {
		t.Fatalf("build test API: %v", err)
	}
	return files
}

// additions is the range the tests reserve for added fields, as check-wire does.
var additions = fieldRange{lo: 1000, hi: 1099}

func TestCompareAPIs(t *testing.T) {
	req := message("Req",
		fieldSpec{"name", 1, tString, optional, ""},
		fieldSpec{"items", 2, tMessage, repeated, ".t.Item"})
	item := message("Item")
	other := message("Other")

	tests := []struct {
		name      string
		oldRPCs   []string
		oldMsgs   []*descriptorpb.DescriptorProto
		newRPCs   []string
		newMsgs   []*descriptorpb.DescriptorProto
		changes   int
		wantError string // substring of the first problem, "" for a pass
	}{{
		name:    "unchanged",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{req, item},
	}, {
		name:    "empty response becomes a new message",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req)Resp"}, newMsgs: []*descriptorpb.DescriptorProto{req, item,
			message("Resp", fieldSpec{"version", 1000, tString, optional, ""})},
		changes: 1,
	}, {
		name:    "empty response becomes a message numbered outside the additions",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req)Resp"}, newMsgs: []*descriptorpb.DescriptorProto{req, item,
			message("Resp", fieldSpec{"version", 1, tString, optional, ""})},
		changes: 1, wantError: "field 1 (version) of t.Resp is added to t.Empty outside 1000-1099",
	}, {
		name:    "empty request becomes an unrelated old message",
		oldRPCs: []string{"Do(Req)Empty", "Stop(Empty)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req)Empty", "Stop(Req)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{req, item},
		changes: 1, wantError: "field 1 (name) of t.Req is added to t.Empty",
	}, {
		name:    "field added to an old message within the additions",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{item,
			message("Req",
				fieldSpec{"name", 1, tString, optional, ""},
				fieldSpec{"items", 2, tMessage, repeated, ".t.Item"},
				fieldSpec{"extra", 1099, tInt64, optional, ""})},
	}, {
		name:    "field added to an old message with upstream's next number",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{item,
			message("Req",
				fieldSpec{"name", 1, tString, optional, ""},
				fieldSpec{"items", 2, tMessage, repeated, ".t.Item"},
				fieldSpec{"extra", 3, tInt64, optional, ""})},
		wantError: "field 3 (extra) of t.Req is added to t.Req outside 1000-1099",
	}, {
		name:    "field added to a message only the new API has",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{req, item,
			message("Mine", fieldSpec{"first", 1, tString, optional, ""})},
	}, {
		name:    "request replaced by a superset",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req2)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{req, item,
			message("Req2",
				fieldSpec{"name", 1, tString, optional, ""},
				fieldSpec{"items", 2, tMessage, repeated, ".t.Item"},
				fieldSpec{"extra", 1000, tInt64, optional, ""})},
		changes: 1,
	}, {
		name:    "request replaced by an unrelated message",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Log)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{req, item,
			message("Log", fieldSpec{"msg", 1, tString, optional, ""}, fieldSpec{"level", 2, tInt64, optional, ""})},
		changes: 1, wantError: "field 2 (items) of t.Req is int64",
	}, {
		name:    "field dropped",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req2)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{req, item,
			message("Req2", fieldSpec{"items", 2, tMessage, repeated, ".t.Item"})},
		changes: 1, wantError: "field 1 (name) of t.Req is missing",
	}, {
		name:    "cardinality changed",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req2)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{req, item,
			message("Req2",
				fieldSpec{"name", 1, tString, optional, ""},
				fieldSpec{"items", 2, tMessage, optional, ".t.Item"})},
		changes: 1, wantError: "was repeated message t.Item",
	}, {
		name:    "message type of a field changed",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req2)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{req, item, other,
			message("Req2",
				fieldSpec{"name", 1, tString, optional, ""},
				fieldSpec{"items", 2, tMessage, repeated, ".t.Other"})},
		changes: 1, wantError: "was repeated message t.Item",
	}, {
		name:    "method removed",
		oldRPCs: []string{"Do(Req)Empty", "Stop(Empty)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"Do(Req)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{req, item},
		wantError: "method t.S.Stop is gone",
	}, {
		name:    "streaming flipped",
		oldRPCs: []string{"Do(Req)Empty"}, oldMsgs: []*descriptorpb.DescriptorProto{req, item},
		newRPCs: []string{"stream Do(Req)Empty"}, newMsgs: []*descriptorpb.DescriptorProto{req, item},
		wantError: "changed its streaming mode",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := compareAPIs(api(t, tc.oldRPCs, tc.oldMsgs...), api(t, tc.newRPCs, tc.newMsgs...), additions)
			if len(r.changes) != tc.changes {
				t.Errorf("got %d changed signatures, want %d", len(r.changes), tc.changes)
			}
			problems := append([]string(nil), r.problems...)
			for _, c := range r.changes {
				problems = append(problems, c.problems...)
			}
			switch {
			case tc.wantError == "" && r.failed():
				t.Errorf("want a pass, got problems %q", problems)
			case tc.wantError != "" && !r.failed():
				t.Errorf("want a problem with %q, got a pass", tc.wantError)
			case tc.wantError != "" && !strings.Contains(strings.Join(problems, "\n"), tc.wantError):
				t.Errorf("want a problem with %q, got %q", tc.wantError, problems)
			}
		})
	}
}

func TestMapFieldsCompareByKeyAndValue(t *testing.T) {
	// Map entry messages are named after their parent, so a map field moved
	// into a new request has a different entry type name but the same wire
	// shape; it must still count as covered.
	withMap := func(name string) *descriptorpb.DescriptorProto {
		m := message(name, fieldSpec{"labels", 1, tMessage, repeated, ".t." + name + ".LabelsEntry"})
		entry := message("LabelsEntry",
			fieldSpec{"key", 1, tString, optional, ""},
			fieldSpec{"value", 2, tString, optional, ""})
		entry.Options = &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)}
		m.NestedType = []*descriptorpb.DescriptorProto{entry}
		return m
	}
	r := compareAPIs(
		api(t, []string{"Do(A)Empty"}, withMap("A")),
		api(t, []string{"Do(B)Empty"}, withMap("A"), withMap("B")), additions)
	if r.failed() || len(r.changes) != 1 {
		t.Fatalf("map field with the same key and value types must pass, got %+v", r)
	}
}

func TestFieldRangeFlag(t *testing.T) {
	var fr fieldRange
	if err := fr.Set("5000-5099"); err != nil || fr != (fieldRange{lo: 5000, hi: 5099}) {
		t.Fatalf("Set(5000-5099) = %v, range %v", err, fr.String())
	}
	for _, bad := range []string{"", "7", "10-1", "0-5", "1-536870912"} {
		if err := fr.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted, got %v", bad, fr.String())
		}
	}
}
