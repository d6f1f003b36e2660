//go:build withhandover

package main

import "github.com/nri-handover/nri/pkg/stub"

// handoverOptions opts the plugin into handover (-handover).
func handoverOptions() []stub.Option { return []stub.Option{stub.WithHandover()} }
