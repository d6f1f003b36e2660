package stub

import (
	"strings"
	"testing"
)

// repeated returns a phrase an error message says twice ("a: a: b", or the
// plugin's name twice), or "".
func repeated(msg string) string {
	seen := map[string]bool{}
	for _, part := range strings.Split(msg, ": ") {
		part = strings.TrimSpace(part)
		if len(part) < 4 {
			continue
		}
		if seen[part] {
			return part
		}
		seen[part] = true
	}
	return ""
}

// TestErrorsSayEachThingOnce walks the stub's option errors and fails on a
// message that repeats a prefix or phrase; both kinds of bad index read the
// same.
func TestErrorsSayEachThingOnce(t *testing.T) {
	cases := []struct {
		name string
		env  string
		opts []Option
	}{
		{"index too long", "", []Option{WithPluginName("p"), WithPluginIdx("100")}},
		{"index not digits", "", []Option{WithPluginName("p"), WithPluginIdx("ab")}},
		{"empty name", "", []Option{WithPluginName(""), WithPluginIdx("10")}},
		{"bad kill switch", "maybe", []Option{WithPluginName("p"), WithPluginIdx("10"), WithHandover()}},
		{"nil logger", "", []Option{WithPluginName("p"), WithPluginIdx("10"), WithLogger(nil)}},
	}
	var indexMsgs []string
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(HandoverEnvVar, tc.env)
			_, err := New(newTestPlugin(), tc.opts...)
			if err == nil {
				t.Fatal("no error")
			}
			if r := repeated(err.Error()); r != "" {
				t.Errorf("%q says %q twice", err, r)
			}
			if strings.Count(err.Error(), "invalid stub option") > 1 {
				t.Errorf("%q repeats its prefix", err)
			}
			if strings.HasPrefix(tc.name, "index") {
				_, after, _ := strings.Cut(err.Error(), "invalid plugin index ")
				_, why, _ := strings.Cut(after, ": ")
				indexMsgs = append(indexMsgs, why)
			}
		})
	}
	if len(indexMsgs) == 2 && indexMsgs[0] != indexMsgs[1] {
		t.Errorf("two wordings for a bad index: %q and %q", indexMsgs[0], indexMsgs[1])
	}
}
