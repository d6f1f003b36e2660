package api

import "time"

// Container timestamps travel as Unix nanoseconds; 0 means "not yet"
// (never started, not finished), which these accessors report as the zero
// time.Time so callers can use IsZero.

func unixNanoTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// GetCreatedAtTime returns when the container was created.
func (x *Container) GetCreatedAtTime() time.Time {
	return unixNanoTime(x.GetCreatedAt())
}

// GetStartedAtTime returns when the container was started.
func (x *Container) GetStartedAtTime() time.Time {
	return unixNanoTime(x.GetStartedAt())
}

// GetFinishedAtTime returns when the container finished.
func (x *Container) GetFinishedAtTime() time.Time {
	return unixNanoTime(x.GetFinishedAt())
}
