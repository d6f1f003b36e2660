// Package ocigen is the tests' spec generator: internal/specgen's, which has
// runtime-tools' semantics, re-exported, and the runtime callbacks and wire
// types the comparison with upstream shares.
//
// It imports neither our API nor upstream's, so the same generator serves our
// tests and test/upstream/generate, and the two implementations of the NRI
// adjustment are compared on the same ground. fixtures.go holds the runtime
// callbacks (class resolvers, CDI injection, filters) both sides install,
// wire.go the cases and results the two processes exchange.
package ocigen

import (
	rspec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/nri-handover/nri/internal/specgen"
)

// Generator edits a spec in place.
type Generator = specgen.Generator

// New returns a generator for spec (a new, empty spec if nil).
func New(spec *rspec.Spec) *Generator { return specgen.New(spec) }
