package ocigen

import (
	"encoding/json"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// Case is one adjustment test/upstream/generate applies: a JSON array of
// them on its stdin.
type Case struct {
	Name string      `json:"name"`
	Spec *rspec.Spec `json:"spec"`
	// Adjustment is the protojson of a ContainerAdjustment, null for none.
	Adjustment json.RawMessage `json:"adjustment"`
	// Callbacks installs this package's resolvers, injector, filter and
	// checker.
	Callbacks bool `json:"callbacks"`
}

// Result is what became of a Case: a JSON array of them on stdout.
type Result struct {
	Name  string      `json:"name"`
	Spec  *rspec.Spec `json:"spec"`
	Error string      `json:"error,omitempty"`
}
