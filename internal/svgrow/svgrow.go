// Package svgrow is what the two SVG timelines (the demo's, cmd/handover-demo,
// and the Kubernetes e2e's, test/realkube/timeline) share so that they read
// alike: the page geometry, the palette, and the placing of numbered marks
// in staggered rows, so that marks close in time keep legible numbers.
package svgrow

// The page: its width, the right end of the time axis, the rows of mark
// numbers above the lanes and their height, the height of a line in a
// panel's list of marks.
const (
	Width     = 1200
	LaneRight = Width - 30
	MarkRows  = 3
	MarkRowH  = 17
	ListLineH = 15
)

// Palette colours instances; LossColor is for what went wrong (lost
// containers, kills, failed pods), SwitchColor for the runtime's switches,
// MarkColor for the scenario's own steps.
var Palette = []string{"#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"}

const (
	LossColor   = "#d62728"
	SwitchColor = "#2ca02c"
	MarkColor   = "#7f7f7f"
)

// Gap is the horizontal room (px) a mark's number needs in its row.
const Gap = 18

// Place returns the row for a mark at x: the first row whose last mark is at
// least Gap to the left, else the row whose last mark is furthest left. It
// records x as that row's last mark. last holds one x per row; start it at
// values far left of the plot (-100).
func Place(last []float64, x float64) int {
	row := 0
	for r := range last {
		if x-last[r] >= Gap {
			row = r
			break
		}
		if last[r] < last[row] {
			row = r
		}
	}
	last[row] = x
	return row
}
