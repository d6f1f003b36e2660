package annotator

import (
	"flag"
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
