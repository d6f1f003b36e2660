package api

import (
	"strings"
	"testing"
)

func TestParsePluginName(t *testing.T) {
	for _, tc := range []struct {
		in        string
		idx, base string
		errPart   string
	}{
		{in: "10-logger", idx: "10", base: "logger"},
		{in: "00-a-b-c", idx: "00", base: "a-b-c"},
		{in: "99-", idx: "99", base: ""},
		{in: "logger", errPart: `"logger"`},
		{in: "", errPart: `""`},
		{in: "1-logger", errPart: `"1"`},
		{in: "100-logger", errPart: `"100"`},
		{in: "x1-logger", errPart: `"x1"`},
		{in: "1x-logger", errPart: `"1x"`},
	} {
		idx, base, err := ParsePluginName(tc.in)
		if tc.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) {
				t.Errorf("ParsePluginName(%q): error %v, want one naming %s", tc.in, err, tc.errPart)
			}
			if idx != "" || base != "" {
				t.Errorf("ParsePluginName(%q): got %q/%q alongside an error", tc.in, idx, base)
			}
			continue
		}
		if err != nil || idx != tc.idx || base != tc.base {
			t.Errorf("ParsePluginName(%q) = %q, %q, %v; want %q, %q, nil", tc.in, idx, base, err, tc.idx, tc.base)
		}
	}
}

func TestCheckPluginIndex(t *testing.T) {
	for _, tc := range []struct {
		idx string
		ok  bool
	}{
		{"00", true}, {"42", true}, {"99", true},
		{"", false}, {"1", false}, {"123", false}, {"a1", false}, {"1a", false}, {"-1", false}, {"٣٣", false},
	} {
		err := CheckPluginIndex(tc.idx)
		if (err == nil) != tc.ok {
			t.Errorf("CheckPluginIndex(%q) = %v, want ok=%v", tc.idx, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), `"`+tc.idx+`"`) {
			t.Errorf("CheckPluginIndex(%q): error %q does not name the index", tc.idx, err)
		}
	}
}

func TestCheckPluginName(t *testing.T) {
	for _, tc := range []struct {
		name    string
		errPart string
	}{
		{name: "logger"},
		{name: "A-z_0.9+x"},
		{name: "", errPart: "empty"},
		{name: "with space", errPart: `' '`},
		{name: "slash/y", errPart: `'/'`},
		{name: "ümlaut", errPart: `'ü'`},
	} {
		err := CheckPluginName(tc.name)
		if tc.errPart == "" {
			if err != nil {
				t.Errorf("CheckPluginName(%q) = %v, want nil", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.errPart) {
			t.Errorf("CheckPluginName(%q) = %v, want error containing %s", tc.name, err, tc.errPart)
		}
		if tc.name != "" && !strings.Contains(err.Error(), `"`+tc.name+`"`) {
			t.Errorf("CheckPluginName(%q): error %q does not name the plugin", tc.name, err)
		}
	}
}
