package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"strings"

	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// peerView is what the upstream peer saw in bytes we sent it.
type peerView struct {
	// Message is upstream's decoding, as protojson with proto field names.
	Message json.RawMessage `json:"message"`
	// UnknownBytes counts bytes upstream kept without knowing their fields.
	UnknownBytes int `json:"unknownBytes"`
	// Reencoded is upstream encoding its decoded message again.
	Reencoded string `json:"reencoded"`
}

// runPeer runs the upstream peer once and returns its stdout; a non-zero
// exit fails the spec with the peer's stderr.
func runPeer(stdin []byte, args ...string) []byte {
	cmd := exec.Command(peerPath, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ExpectWithOffset(2, cmd.Run()).To(Succeed(), "wirepeer %s: %s", strings.Join(args, " "), stderr.String())
	return stdout.Bytes()
}

// upstreamDecodes sends msg's encoding to the peer, which decodes it as
// upstream's message named upstreamType.
func upstreamDecodes(msg proto.Message, upstreamType string) peerView {
	raw, err := proto.Marshal(msg)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out := runPeer([]byte(base64.StdEncoding.EncodeToString(raw)), "decode", upstreamType)
	var view peerView
	ExpectWithOffset(1, json.Unmarshal(out, &view)).To(Succeed(), "peer output: %s", out)
	return view
}

// upstreamEncodes has the peer build upstream's message upstreamType from
// the protojson of msg and returns upstream's encoding of it.
func upstreamEncodes(upstreamType string, msg proto.Message) []byte {
	js := protoJSON(msg)
	out := runPeer(js, "encode", upstreamType)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(out)))
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "peer output: %s", out)
	return raw
}

// protoJSON renders msg the way the peer renders upstream's messages, so the
// two can be compared field by field.
func protoJSON(msg proto.Message) []byte {
	js, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(msg)
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	return js
}

func b64decode(s string) []byte {
	raw, err := base64.StdEncoding.DecodeString(s)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return raw
}
