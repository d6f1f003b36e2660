package api

import "strings"

// ToOCI renders e as an OCI "KEY=value" environment entry.
func (e *KeyValue) ToOCI() string {
	return e.Key + "=" + e.Value
}

// FromOCIEnv splits OCI "KEY=value" entries at the first '='; an entry
// without '=' becomes a key with an empty value. nil stays nil.
func FromOCIEnv(in []string) []*KeyValue {
	if in == nil {
		return nil
	}
	out := make([]*KeyValue, 0, len(in))
	for _, entry := range in {
		key, value, _ := strings.Cut(entry, "=")
		out = append(out, &KeyValue{Key: key, Value: value})
	}
	return out
}
