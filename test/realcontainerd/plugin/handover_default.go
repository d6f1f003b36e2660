//go:build !withhandover

package main

import "github.com/nri-handover/nri/pkg/stub"

// handoverOptions is empty where pkg/stub has no WithHandover yet (before
// the opt-in, the stub always advertised handover). surge.sh builds with
// -tags withhandover where the option exists; once every branch has it,
// this pair of files becomes one call to stub.WithHandover().
func handoverOptions() []stub.Option { return nil }
