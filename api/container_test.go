package api

import (
	"testing"
	"time"
)

func TestContainerTimes(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	started := created.Add(time.Second)
	ctr := &Container{CreatedAt: created.UnixNano(), StartedAt: started.UnixNano()}
	for _, tc := range []struct {
		name string
		got  time.Time
		want time.Time
	}{
		{"created", ctr.GetCreatedAtTime(), created},
		{"started", ctr.GetStartedAtTime(), started},
		{"finished (unset)", ctr.GetFinishedAtTime(), time.Time{}},
		{"nil container", (*Container)(nil).GetCreatedAtTime(), time.Time{}},
	} {
		if !tc.got.Equal(tc.want) || tc.got.IsZero() != tc.want.IsZero() {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
