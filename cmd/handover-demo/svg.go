package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/nri-handover/nri/internal/svgrow"
)

// The SVG timeline: one panel per part, one lane per instance (process
// lives as bars by state, container creations as ticks in the lane of the
// instance that handled them), extra lanes for lost and duplicated
// containers, numbered vertical lines for the demo's actions and the
// adaptation's switches with their list below, and a legend.
const (
	svgWidth  = svgrow.Width
	laneLeft  = 170 // x where time starts
	laneRight = svgrow.LaneRight
	laneH     = 38
	markRows  = svgrow.MarkRows
	markRowH  = svgrow.MarkRowH
	listLineH = svgrow.ListLineH
)

var (
	palette   = svgrow.Palette
	lossColor = svgrow.LossColor
	markColor = map[markKind]string{markAction: svgrow.MarkColor, markKill: svgrow.LossColor, markSwitch: svgrow.SwitchColor}
)

// instanceColor is the same for an instance id in every panel.
func instanceColor(instance string) string {
	if n := len(instance); n > 0 {
		return palette[int(instance[n-1]-'a')%len(palette)]
	}
	return palette[0]
}

type svgBuf struct{ bytes.Buffer }

func (b *svgBuf) f(format string, args ...any) { fmt.Fprintf(b, format, args...); b.WriteByte('\n') }

// text writes a text element; attrs are extra attributes.
func (b *svgBuf) text(x, y float64, attrs, s string) {
	var esc bytes.Buffer
	_ = xml.EscapeText(&esc, []byte(s))
	b.f(`<text x="%.1f" y="%.1f" %s>%s</text>`, x, y, attrs, esc.String())
}

func renderSVG(parts ...*part) []byte {
	var body svgBuf
	y := 40.0
	body.text(16, 26, `font-size="18" font-weight="bold"`, "nri-handover demo: the example plugin rolled out while containers are created")
	for _, p := range parts {
		y = renderPanel(&body, p, y) + 24
	}
	y = renderLegend(&body, y)
	var out svgBuf
	out.f(`<?xml version="1.0" encoding="UTF-8"?>`)
	out.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">`,
		svgWidth, y+10, svgWidth, y+10)
	out.f(`<rect width="100%%" height="100%%" fill="white"/>`)
	out.Write(body.Bytes())
	out.f(`</svg>`)
	return out.Bytes()
}

// laneOf is one row of a panel.
type laneOf struct {
	id, label, sub, color string
	lives                 []*life
	ticks                 []time.Time
}

func panelLanes(p *part) []*laneOf {
	var lanes []*laneOf
	byID := map[string]*laneOf{}
	p.tl.mu.Lock()
	for _, l := range p.tl.lives {
		ln := byID[l.instance]
		if ln == nil {
			ln = &laneOf{id: l.instance, label: l.instance, color: instanceColor(l.instance)}
			byID[l.instance] = ln
			lanes = append(lanes, ln)
		}
		sub := fmt.Sprintf("%s, generation %d", l.version, l.generation)
		if !strings.Contains(ln.sub, sub) {
			ln.sub = strings.TrimPrefix(ln.sub+"; "+sub, "; ")
		}
		ln.lives = append(ln.lives, l)
	}
	p.tl.mu.Unlock()
	dup := &laneOf{id: "duplicates", label: "duplicates", sub: "two instances: creation failed", color: lossColor}
	lost := &laneOf{id: "lost", label: "lost", sub: "no instance handled it", color: lossColor}
	for _, r := range p.recs {
		switch {
		case r.conflict(), r.err != nil:
			dup.ticks = append(dup.ticks, r.start)
		case r.stamp == "":
			lost.ticks = append(lost.ticks, r.start)
		default:
			if ln := byID[r.instance()]; ln != nil {
				ln.ticks = append(ln.ticks, r.start)
			} else {
				lost.ticks = append(lost.ticks, r.start)
			}
		}
	}
	return append(lanes, dup, lost)
}

// renderPanel draws one part from y and returns where it ends.
func renderPanel(b *svgBuf, p *part, y float64) float64 {
	t0 := p.tl.start
	for _, l := range p.tl.lives {
		if l.start.Before(t0) {
			t0 = l.start
		}
	}
	span := p.end.Sub(t0)
	if span <= 0 {
		span = time.Millisecond
	}
	xOf := func(t time.Time) float64 {
		f := float64(t.Sub(t0)) / float64(span)
		return laneLeft + math.Max(0, math.Min(1, f))*(laneRight-laneLeft)
	}

	b.f(`<g class="panel" data-handover="%v">`, p.handover)
	b.text(16, y+18, `font-size="15" font-weight="bold"`, p.title)
	b.text(16, y+36, `font-size="12"`, p.verdict.String())
	lanes := panelLanes(p)
	marksTop := y + 48
	top := marksTop + markRows*markRowH + 4
	bottom := top + float64(len(lanes))*laneH

	for i, ln := range lanes {
		ly := top + float64(i)*laneH
		fill := "#f7f7f7"
		if i%2 == 1 {
			fill = "#ffffff"
		}
		b.f(`<g class="lane" data-instance="%s">`, ln.id)
		b.f(`<rect x="8" y="%.1f" width="%d" height="%d" fill="%s"/>`, ly, laneRight-8+10, laneH, fill)
		b.text(14, ly+16, fmt.Sprintf(`font-size="13" font-weight="bold" fill="%s"`, ln.color), fmt.Sprintf("%s (%d)", ln.label, len(ln.ticks)))
		b.text(14, ly+31, `font-size="10" fill="#555"`, ln.sub)
		renderTicks(b, ln, ly, xOf)
		for _, l := range ln.lives {
			renderLife(b, l, ln.color, ly+24, xOf)
		}
		b.f(`</g>`)
	}

	// Time axis.
	b.f(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333"/>`, laneLeft, bottom, laneRight, bottom)
	step := niceStep(span)
	for t := time.Duration(0); t <= span; t += step {
		x := xOf(t0.Add(t))
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`, x, bottom, x, bottom+5)
		b.text(x, bottom+18, `font-size="11" text-anchor="middle"`, fmt.Sprintf("%g s", t.Seconds()))
	}

	// Marks: a numbered line each, numbers staggered so close ones stay legible.
	p.tl.mu.Lock()
	marks := append([]mark(nil), p.tl.marks...)
	p.tl.mu.Unlock()
	lastX := make([]float64, markRows)
	for i := range lastX {
		lastX[i] = -100
	}
	for i, m := range marks {
		x := xOf(m.t)
		row := svgrow.Place(lastX, x)
		cy := marksTop + float64(markRows-1-row)*markRowH + 8
		color := markColor[m.kind]
		dash := ""
		if m.kind == markAction {
			dash = ` stroke-dasharray="4 3"`
		}
		b.f(`<line class="mark" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"%s/>`, x, cy+8, x, bottom, color, dash)
		b.f(`<circle cx="%.1f" cy="%.1f" r="8" fill="%s"/>`, x, cy, color)
		b.text(x, cy+4, `font-size="10" fill="white" text-anchor="middle" font-weight="bold"`, fmt.Sprint(i+1))
	}

	// The list of marks, in two columns.
	listTop := bottom + 38
	half := (len(marks) + 1) / 2
	for i, m := range marks {
		col, row := i/max(half, 1), i%max(half, 1)
		x := 16.0 + float64(col)*(svgWidth/2)
		ly := listTop + float64(row)*listLineH
		b.f(`<circle cx="%.1f" cy="%.1f" r="6" fill="%s"/>`, x+6, ly-4, markColor[m.kind])
		label := m.label
		if len(label) > 88 {
			label = label[:85] + "..."
		}
		b.text(x+18, ly, `font-size="11"`, fmt.Sprintf("%5.0f ms  %s", float64(m.t.Sub(t0))/float64(time.Millisecond), label))
	}
	b.f(`</g>`)
	return listTop + float64(half)*listLineH
}

// renderTicks draws one tick per pixel column that had creations.
func renderTicks(b *svgBuf, ln *laneOf, ly float64, xOf func(time.Time) float64) {
	seen := map[int]bool{}
	for _, t := range ln.ticks {
		x := int(math.Round(xOf(t)))
		if seen[x] {
			continue
		}
		seen[x] = true
		b.f(`<rect class="ctr" x="%d" y="%.1f" width="1.5" height="10" fill="%s"/>`, x, ly+4, ln.color)
	}
}

// renderLife draws one process: a thin line while it runs, a bar by state.
func renderLife(b *svgBuf, l *life, color string, cy float64, xOf func(time.Time) float64) {
	x1, x2 := xOf(l.start), xOf(l.end)
	b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-width="1.5"/>`, x1, cy, x2, cy)
	b.f(`<circle cx="%.1f" cy="%.1f" r="2.5" fill="#999"/>`, x1, cy)
	for _, s := range l.segs {
		sx1, sx2 := xOf(s.from), xOf(s.to)
		w := math.Max(sx2-sx1, 1)
		switch s.state {
		case "active":
			b.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="10" fill="%s"/>`, sx1, cy-5, w, color)
		case "standby":
			b.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="8" fill="%s" fill-opacity="0.25" stroke="%s" stroke-dasharray="3 2"/>`, sx1, cy-4, w, color, color)
		case "synchronizing":
			b.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="6" fill="#bbb"/>`, sx1, cy-3, math.Max(w, 2))
		case "frozen":
			b.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="10" fill="#555"/>`, sx1, cy-5, w)
		}
	}
	switch {
	case l.how == "kill -9":
		b.text(x2, cy+5, fmt.Sprintf(`font-size="15" font-weight="bold" fill="%s" text-anchor="middle"`, lossColor), "✕")
	case strings.HasPrefix(l.how, "exit status"):
		b.text(x2+4, cy+4, `font-size="10" fill="#555"`, "rejected, "+l.how)
	case l.how != "running":
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" stroke-width="2"/>`, x2, cy-6, x2, cy+6)
	}
}

func niceStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
		500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second} {
		if span/s <= 16 {
			return s
		}
	}
	return time.Minute
}

func renderLegend(b *svgBuf, y float64) float64 {
	b.f(`<g class="legend">`)
	b.text(16, y+14, `font-size="13" font-weight="bold"`, "Legend")
	x, row := 16.0, y+36
	item := func(draw func(x, y float64), label string) {
		draw(x, row)
		b.text(x+34, row+4, `font-size="11"`, label)
		x += 34 + float64(len(label))*6.3 + 22
		if x > svgWidth-250 {
			x, row = 16, row+22
		}
	}
	c := palette[0]
	item(func(x, y float64) {
		b.f(`<rect x="%.1f" y="%.1f" width="1.5" height="10" fill="%s"/><rect x="%.1f" y="%.1f" width="1.5" height="10" fill="%s"/><rect x="%.1f" y="%.1f" width="1.5" height="10" fill="%s"/>`,
			x+8, y-5, c, x+13, y-5, c, x+18, y-5, c)
	}, "container created, handled by the lane's instance (its colour)")
	item(func(x, y float64) { b.f(`<rect x="%.1f" y="%.1f" width="28" height="10" fill="%s"/>`, x, y-5, c) }, "active: receives events")
	item(func(x, y float64) {
		b.f(`<rect x="%.1f" y="%.1f" width="28" height="8" fill="%s" fill-opacity="0.25" stroke="%s" stroke-dasharray="3 2"/>`, x, y-4, c, c)
	}, "standby (WithStandbyGrace)")
	item(func(x, y float64) { b.f(`<rect x="%.1f" y="%.1f" width="28" height="6" fill="#bbb"/>`, x, y-3) }, "synchronizing")
	item(func(x, y float64) { b.f(`<rect x="%.1f" y="%.1f" width="28" height="10" fill="#555"/>`, x, y-5) }, "hung (SIGSTOP)")
	item(func(x, y float64) {
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-width="1.5"/>`, x, y, x+28, y)
	}, "process running, no events")
	item(func(x, y float64) {
		b.text(x+14, y+5, fmt.Sprintf(`font-size="15" font-weight="bold" fill="%s" text-anchor="middle"`, lossColor), "✕")
	}, "killed with kill -9")
	for _, k := range []struct {
		kind  markKind
		label string
	}{{markSwitch, "the adaptation switched the active instance"}, {markKill, "the demo sent kill -9"}, {markAction, "the demo's other actions"}} {
		kind := k.kind
		item(func(x, y float64) {
			b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/><circle cx="%.1f" cy="%.1f" r="7" fill="%s"/>`,
				x+14, y-9, x+14, y+9, markColor[kind], x+14, y, markColor[kind])
		}, k.label)
	}
	b.f(`</g>`)
	return row + 16
}
