package svgrow

import "testing"

func TestPlace(t *testing.T) {
	last := []float64{-100, -100, -100}
	for i, tc := range []struct {
		x    float64
		want int
	}{
		{0, 0},  // room everywhere: the first row
		{5, 1},  // too close to row 0
		{10, 2}, // too close to rows 0 and 1
		{12, 0}, // no row has room: the one furthest left
		{40, 0}, // room again in the first row
		{41, 1},
	} {
		if got := Place(last, tc.x); got != tc.want {
			t.Fatalf("mark %d at %g: row %d, want %d", i, tc.x, got, tc.want)
		}
	}
}
