package api

import "maps"

// DupStringSlice copies in, keeping nil distinct from empty so that
// presence-sensitive comparisons still see the difference.
func DupStringSlice(in []string) []string {
	if in == nil {
		return nil
	}
	return append(make([]string, 0, len(in)), in...)
}

// DupStringMap copies in, keeping nil distinct from empty.
func DupStringMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	maps.Copy(out, in)
	return out
}
