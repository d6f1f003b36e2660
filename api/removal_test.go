package api

import "testing"

func TestRemovalMarker(t *testing.T) {
	for _, tc := range []struct {
		in     string
		key    string
		marked bool
	}{
		{"", "", false},
		{"key", "key", false},
		{"-key", "key", true},
		{"--key", "-key", true},
		{"-", "", true},
		{"a-b", "a-b", false},
	} {
		key, marked := IsMarkedForRemoval(tc.in)
		if key != tc.key || marked != tc.marked {
			t.Errorf("IsMarkedForRemoval(%q) = %q, %v; want %q, %v", tc.in, key, marked, tc.key, tc.marked)
		}
		if got := ClearRemovalMarker(tc.in); got != tc.key {
			t.Errorf("ClearRemovalMarker(%q) = %q, want %q", tc.in, got, tc.key)
		}
	}
	for _, key := range []string{"", "a", "-a", "/mnt/data"} {
		got, marked := IsMarkedForRemoval(MarkForRemoval(key))
		if !marked || got != key {
			t.Errorf("round trip of %q gave %q, %v", key, got, marked)
		}
	}
}

func TestEntryIsMarkedForRemoval(t *testing.T) {
	type marker interface{ IsMarkedForRemoval() (string, bool) }
	for _, tc := range []struct {
		name   string
		entry  marker
		key    string
		marked bool
	}{
		{"env plain", &KeyValue{Key: "PATH", Value: "/bin"}, "PATH", false},
		{"env marked", &KeyValue{Key: MarkForRemoval("PATH")}, "PATH", true},
		{"mount plain", &Mount{Destination: "/data"}, "/data", false},
		{"mount marked", &Mount{Destination: MarkForRemoval("/data")}, "/data", true},
		{"device plain", &LinuxDevice{Path: "/dev/null"}, "/dev/null", false},
		{"device marked", &LinuxDevice{Path: MarkForRemoval("/dev/null")}, "/dev/null", true},
		{"namespace plain", &LinuxNamespace{Type: "network"}, "network", false},
		{"namespace marked", &LinuxNamespace{Type: MarkForRemoval("network")}, "network", true},
	} {
		key, marked := tc.entry.IsMarkedForRemoval()
		if key != tc.key || marked != tc.marked {
			t.Errorf("%s: got %q, %v; want %q, %v", tc.name, key, marked, tc.key, tc.marked)
		}
	}
}
