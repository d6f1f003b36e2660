package api

import (
	"testing"
)

// Every enum value we convert must have an OCI spelling that maps back to
// it; a mismatch would silently turn a setting into the zero value.
func TestEnumNamesRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		names  map[int32]string
		values map[string]int32
	}{
		{"IOPrioClass", IOPrioClass_name, IOPrioClass_value},
		{"LinuxSchedulerPolicy", LinuxSchedulerPolicy_name, LinuxSchedulerPolicy_value},
		{"LinuxSchedulerFlag", LinuxSchedulerFlag_name, LinuxSchedulerFlag_value},
		{"MpolMode", MpolMode_name, MpolMode_value},
		{"MpolFlag", MpolFlag_name, MpolFlag_value},
	} {
		for v := range tc.names {
			s := enumToOCI[string](tc.names, v)
			if back := enumFromOCI[int32](tc.values, s); back != v {
				t.Errorf("%s %d -> %q -> %d", tc.name, v, s, back)
			}
		}
	}
	if enumToOCI[string](MpolFlag_name, int32(99)) != "" {
		t.Error("unknown enum value should map to an empty name")
	}
}
