// Command wirepeer stands in for an old NRI peer: it links only upstream
// containerd/nri v0.12.5's pkg/api, so the wire tests (test/wire) can show
// that bytes we produce decode as upstream's messages and the other way
// round, across a process boundary. Our api package must never be linked in
// here: both register the same protobuf names, which panics.
//
// Usage:
//
//	wirepeer decode MESSAGE   stdin: base64 of the encoded message
//	wirepeer encode MESSAGE   stdin: the message in protojson
//	wirepeer describe         no input
//
// MESSAGE is a name in package nri.pkg.api.v1alpha1, e.g. RegisterPluginRequest.
// decode prints a JSON object: "message" (what upstream understood, protojson
// with proto field names), "unknownBytes" (bytes upstream kept but does not
// know) and "reencoded" (base64 of upstream encoding the message again, which
// must still carry the unknown fields). encode prints the base64 encoding.
// describe prints upstream's compiled api.proto as a FileDescriptorProto in
// protojson, so the tests can compare field numbers with upstream's as built.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	// Registers upstream's message types under nri.pkg.api.v1alpha1.
	_ "github.com/containerd/nri/pkg/api"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

const apiPackage = "nri.pkg.api.v1alpha1"

// decoded is what decode prints; test/wire reads the same shape.
type decoded struct {
	Message      json.RawMessage `json:"message"`
	UnknownBytes int             `json:"unknownBytes"`
	Reencoded    string          `json:"reencoded"`
}

func main() {
	var err error
	switch {
	case len(os.Args) == 2 && os.Args[1] == "describe":
		err = describe(os.Stdout)
	case len(os.Args) == 3:
		err = run(os.Args[1], os.Args[2], os.Stdin, os.Stdout)
	default:
		fmt.Fprintln(os.Stderr, "usage: wirepeer decode|encode MESSAGE | wirepeer describe")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "wirepeer: %v\n", err)
		os.Exit(1)
	}
}

func run(op, name string, in io.Reader, out io.Writer) error {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(apiPackage + "." + name))
	if err != nil {
		return fmt.Errorf("upstream has no message %s: %w", name, err)
	}
	input, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	msg := mt.New().Interface()
	switch op {
	case "decode":
		return decode(msg, strings.TrimSpace(string(input)), out)
	case "encode":
		return encode(msg, input, out)
	}
	return fmt.Errorf("unknown operation %q", op)
}

func decode(msg proto.Message, b64 string, out io.Writer) error {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return fmt.Errorf("decode base64: %w", err)
	}
	if err := proto.Unmarshal(raw, msg); err != nil {
		return fmt.Errorf("unmarshal %s: %w", msg.ProtoReflect().Descriptor().Name(), err)
	}
	known, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(msg)
	if err != nil {
		return fmt.Errorf("render %s as json: %w", msg.ProtoReflect().Descriptor().Name(), err)
	}
	again, err := proto.Marshal(msg)
	if err != nil {
		return fmt.Errorf("re-encode %s: %w", msg.ProtoReflect().Descriptor().Name(), err)
	}
	return json.NewEncoder(out).Encode(decoded{
		Message:      known,
		UnknownBytes: unknownBytes(msg.ProtoReflect()),
		Reencoded:    base64.StdEncoding.EncodeToString(again),
	})
}

// unknownBytes adds up the unknown fields kept anywhere in m, so a test can
// tell that new fields nested in known messages were carried, not dropped.
func unknownBytes(m protoreflect.Message) int {
	n := len(m.GetUnknown())
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					n += unknownBytes(mv.Message())
					return true
				})
			}
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				n += unknownBytes(v.List().Get(i).Message())
			}
		case fd.Message() != nil:
			n += unknownBytes(v.Message())
		}
		return true
	})
	return n
}

func encode(msg proto.Message, jsonInput []byte, out io.Writer) error {
	if err := protojson.Unmarshal(jsonInput, msg); err != nil {
		return fmt.Errorf("parse %s from json: %w", msg.ProtoReflect().Descriptor().Name(), err)
	}
	raw, err := proto.Marshal(msg)
	if err != nil {
		return fmt.Errorf("marshal %s: %w", msg.ProtoReflect().Descriptor().Name(), err)
	}
	_, err = fmt.Fprintln(out, base64.StdEncoding.EncodeToString(raw))
	return err
}

// describe prints the file that declares upstream's API messages.
func describe(out io.Writer) error {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(apiPackage + ".Empty")
	if err != nil {
		return fmt.Errorf("upstream's api is not linked: %w", err)
	}
	file := protodesc.ToFileDescriptorProto(mt.Descriptor().ParentFile())
	js, err := protojson.Marshal(file)
	if err != nil {
		return fmt.Errorf("render %s as json: %w", file.GetName(), err)
	}
	_, err = fmt.Fprintln(out, string(js))
	return err
}
