package annotator

import (
	"flag"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Main parses its command line before it touches the runtime: help and a
// flag a harness added (WithFlags) end it with 0 there, an unknown flag
// with exitFailed, as exit.go documents for bad flags.
func TestMainFlags(t *testing.T) {
	var extra string
	withExtra := WithFlags(func(fs *flag.FlagSet) { fs.StringVar(&extra, "extra", "", "a harness's flag") })
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"help", []string{"-h"}, exitOK},
		{"harness flag, then help", []string{"-extra", "x", "-h"}, exitOK},
		{"unknown flag", []string{"-no-such-flag"}, exitFailed},
		{"bad value", []string{"-generation", "minus-one"}, exitFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Main(tc.args, withExtra); got != tc.want {
				t.Errorf("Main(%q) = %d, want %d", tc.args, got, tc.want)
			}
			if tc.args[0] == "-extra" && extra != "x" {
				t.Errorf("the harness's flag was parsed as %q, want x", extra)
			}
		})
	}
}

// TestReadyAfterHandover: with -ready-after-handover the old pod answers 200
// once it handed over, whatever the stub says; before, the stub decides.
func TestReadyAfterHandover(t *testing.T) {
	var done atomic.Bool
	handedOver := done.Load
	stubSays := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "superseded", http.StatusServiceUnavailable)
	})
	h := handedOverReady(handedOver, stubSays)
	probe := func() int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code
	}
	if code := probe(); code != http.StatusServiceUnavailable {
		t.Fatalf("before the handover /readyz answers %d, want the stub's 503", code)
	}
	done.Store(true)
	if code := probe(); code != http.StatusOK {
		t.Fatalf("after the handover /readyz answers %d, want 200", code)
	}
}
