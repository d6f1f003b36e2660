package api

// The OCI runtime spec spells enum values exactly like our proto enum value
// names (IOPRIO_CLASS_RT, SCHED_FIFO, MPOL_BIND, ...), so conversions go
// through the generated name/value tables. Unknown OCI names map to the
// enum's zero value; unknown enum values map to "".

func enumFromOCI[E ~int32, S ~string](values map[string]int32, s S) E {
	return E(values[string(s)])
}

func enumToOCI[S ~string, E ~int32](names map[int32]string, e E) S {
	return S(names[int32(e)])
}

// enumSliceFromOCI converts a list, keeping nil as nil.
func enumSliceFromOCI[E ~int32, S ~string](values map[string]int32, in []S) []E {
	if in == nil {
		return nil
	}
	out := make([]E, len(in))
	for i, s := range in {
		out[i] = enumFromOCI[E](values, s)
	}
	return out
}

// enumSliceToOCI converts a list, keeping nil as nil.
func enumSliceToOCI[S ~string, E ~int32](names map[int32]string, in []E) []S {
	if in == nil {
		return nil
	}
	out := make([]S, len(in))
	for i, e := range in {
		out[i] = enumToOCI[S](names, e)
	}
	return out
}
