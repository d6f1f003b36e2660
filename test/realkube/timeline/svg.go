package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/nri-handover/nri/internal/svgrow"
)

// The SVG, in cmd/handover-demo/svg.go's style (its palette, lanes, marks
// and legend, so the two figures read alike): one panel per scenario, one
// lane per plugin pod with the load pods its instance stamped as ticks, a
// lane for the instance active in containerd, one for load pods stamped by
// no known instance, one for the DaemonSet's numberAvailable, and numbered
// vertical lines for the scenario's marks and containerd's switches.
const (
	svgWidth  = svgrow.Width
	laneLeft  = 190 // x where time starts
	laneRight = svgrow.LaneRight
	laneH     = 36
	markRows  = svgrow.MarkRows
	markRowH  = svgrow.MarkRowH
	listLineH = svgrow.ListLineH
)

var (
	palette   = svgrow.Palette
	okColor   = svgrow.SwitchColor
	lossColor = svgrow.LossColor
	markColor = map[string]string{"mark": svgrow.MarkColor, "kill": lossColor, "switch": okColor}
)

type svgBuf struct{ bytes.Buffer }

func (b *svgBuf) f(format string, args ...any) { fmt.Fprintf(b, format, args...); b.WriteByte('\n') }

// text writes a text element, s escaped; attrs are extra attributes.
func (b *svgBuf) text(x, y float64, attrs, s string) {
	b.f(`<text x="%.1f" y="%.1f" %s>%s</text>`, x, y, attrs, esc(s))
}

// esc escapes s for an attribute value.
func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// figure holds what spans panels: an instance (pod uid) keeps its colour
// and its pod's name in every panel, a pod outliving a scenario included.
type figure struct {
	svgBuf
	color, podName map[string]string
}

func (g *figure) colorOf(uid string) string {
	if c, ok := g.color[uid]; ok {
		return c
	}
	g.color[uid] = palette[len(g.color)%len(palette)]
	return g.color[uid]
}

func (g *figure) nameOf(uid string) string {
	if n := g.podName[uid]; n != "" {
		return n
	}
	return uid
}

func render(heading string, scs []*scenario, tks []takeover) []byte {
	g := &figure{color: map[string]string{}, podName: map[string]string{}}
	for _, s := range scs {
		for _, p := range s.pods {
			g.colorOf(p.uid)
			g.podName[p.uid] = p.name
		}
	}
	y := 40.0
	g.text(16, 26, `font-size="18" font-weight="bold"`, heading)
	for _, s := range scs {
		y = g.panel(s, tks, y) + 24
	}
	y = g.legend(y)
	var out svgBuf
	out.f(`<?xml version="1.0" encoding="UTF-8"?>`)
	out.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">`,
		svgWidth, y+10, svgWidth, y+10)
	out.f(`<rect width="100%%" height="100%%" fill="white"/>`)
	out.Write(g.Bytes())
	out.f(`</svg>`)
	return out.Bytes()
}

// lane is one row of a panel: draw fills it given its top y.
type lane struct {
	label, sub, color string
	draw              func(ly float64)
}

// panel draws one scenario from y and returns where it ends.
func (g *figure) panel(s *scenario, tks []takeover, y float64) float64 {
	span := math.Max(s.t1-s.t0, 0.001)
	xOf := func(t float64) float64 {
		return laneLeft + math.Max(0, math.Min(1, (t-s.t0)/span))*(laneRight-laneLeft)
	}
	in := func(t float64) bool { return t >= s.t0 && t <= s.t1 }
	bar := func(x1, x2, cy, h float64, attrs string) {
		g.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" %s/>`, x1, cy-h/2, math.Max(x2-x1, 1), h, attrs)
	}
	tick := func(l loadPod, ly float64) {
		c := okColor
		if !l.ok {
			c = lossColor
		}
		g.f(`<rect class="load" data-pod="%s" data-ok="%v" x="%.1f" y="%.1f" width="2" height="10" fill="%s"/>`, esc(l.name), l.ok, xOf(l.t)-1, ly+3, c)
	}

	// The plugin pods, in the order they appear; the load pods their instance stamped.
	var lanes []lane
	events := map[string][]podEvent{}
	var uids []string
	for _, p := range s.pods {
		if events[p.uid] == nil {
			uids = append(uids, p.uid)
		}
		events[p.uid] = append(events[p.uid], p)
	}
	for _, uid := range uids {
		evs, c := events[uid], g.colorOf(uid)
		var mine []loadPod
		for _, l := range s.load {
			if l.uid == uid {
				mine = append(mine, l)
			}
		}
		lanes = append(lanes, lane{evs[0].name, fmt.Sprintf("gen %s, stamped %d load pods", evs[0].gen, len(mine)), c, func(ly float64) {
			for i, e := range evs {
				to := s.t1
				if i+1 < len(evs) {
					to = evs[i+1].t
				} else if e.deleting { // its last event: deleted
					to = e.t
					g.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" stroke-width="2"/>`, xOf(to), ly+18, xOf(to), ly+30)
				}
				switch {
				case to <= max(s.t0, e.t) || e.t >= s.t1: // outside, or the event of its deletion
				case e.ready:
					bar(xOf(e.t), xOf(to), ly+24, 10, fmt.Sprintf(`class="ready" fill="%s"`, c))
				case e.deleting:
					bar(xOf(e.t), xOf(to), ly+24, 8, fmt.Sprintf(`fill="%s" fill-opacity="0.25" stroke="%s" stroke-dasharray="3 2"`, c, c))
				default:
					bar(xOf(e.t), xOf(to), ly+24, 8, fmt.Sprintf(`fill="%s" fill-opacity="0.3"`, c))
				}
			}
			for _, l := range mine {
				tick(l, ly)
			}
		}})
	}

	// The instance containerd delivers to, per plugin with a takeover in
	// the scenario: its first takeover's predecessor before it. (Without
	// one in the scenario containerd's log names no instance: stock
	// containerd logs none.) The switches join the marks.
	marks := append([]mark(nil), s.marks...)
	byPlugin := map[string][]takeover{}
	var plugins []string
	for _, tk := range tks {
		if !in(tk.t) {
			continue
		}
		if byPlugin[tk.plugin] == nil {
			plugins = append(plugins, tk.plugin)
		}
		byPlugin[tk.plugin] = append(byPlugin[tk.plugin], tk)
		what := fmt.Sprintf("%s switched to %s %s gen %s from %s %s", tk.plugin, g.nameOf(tk.instance), tk.version, tk.gen, g.nameOf(tk.from), tk.fromVersion)
		switch {
		case tk.reactivated:
			what = fmt.Sprintf("%s reactivated %s %s gen %s after %s %s left", tk.plugin, g.nameOf(tk.instance), tk.version, tk.gen, g.nameOf(tk.from), tk.fromVersion)
		case tk.joined:
			what = fmt.Sprintf("%s: %s %s gen %s active (no predecessor left)", tk.plugin, g.nameOf(tk.instance), tk.version, tk.gen)
		case tk.closed:
			what = fmt.Sprintf("%s: %s %s gone, no instance active", tk.plugin, g.nameOf(tk.from), tk.fromVersion)
		}
		marks = append(marks, mark{tk.t, what, "switch"})
	}
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].t < marks[j].t })
	for _, pl := range plugins {
		tks := byPlugin[pl]
		lanes = append(lanes, lane{"active in containerd", pl, "#333", func(ly float64) {
			cur, from := tks[0].from, s.t0
			for _, tk := range append(tks, takeover{t: s.t1}) {
				x1, x2 := xOf(from), xOf(tk.t)
				if cur == "" { // none active (the active one was killed)
					cur, from = tk.instance, tk.t
					continue
				}
				bar(x1, x2, ly+18, 14, fmt.Sprintf(`class="active" data-instance="%s" fill="%s"`, esc(cur), g.colorOf(cur)))
				if name := g.nameOf(cur); x2-x1 > float64(len(name))*6+8 {
					g.text(x1+4, ly+22, `font-size="10" fill="white"`, name)
				}
				cur, from = tk.instance, tk.t
			}
		}})
	}

	var other []loadPod
	for _, l := range s.load {
		if events[l.uid] == nil {
			other = append(other, l)
		}
	}
	lanes = append(lanes, lane{"load pods", fmt.Sprintf("%d without one known stamp", len(other)), "#555", func(ly float64) {
		for _, l := range other {
			tick(l, ly)
		}
	}})
	maxDS := 1
	for _, d := range s.ds {
		maxDS = max(maxDS, d.available, d.desired)
	}
	lanes = append(lanes, lane{"DaemonSet available", fmt.Sprintf("numberAvailable, 0 to %d", maxDS), "#333", func(ly float64) {
		yOf := func(v int) float64 { return ly + 30 - float64(v)/float64(maxDS)*22 }
		var pts []string
		for i, d := range s.ds {
			to := s.t1
			if i+1 < len(s.ds) {
				to = s.ds[i+1].t
			}
			if to <= s.t0 {
				continue
			}
			x1, x2 := xOf(d.t), xOf(to)
			if d.available == 0 {
				bar(x1, x2, ly+18, laneH-4, fmt.Sprintf(`class="unavailable" fill="%s" fill-opacity="0.35"`, lossColor))
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x1, yOf(d.available), x2, yOf(d.available)))
			if i == 0 || s.ds[i-1].available != d.available {
				g.text(x1+2, yOf(d.available)-2, `font-size="9" fill="#333"`, fmt.Sprint(d.available))
			}
		}
		g.f(`<polyline points="%s" fill="none" stroke="#333" stroke-width="1.5"/>`, strings.Join(pts, " "))
	}})

	g.f(`<g class="panel" data-scenario="%s">`, esc(s.name))
	g.text(16, y+18, `font-size="15" font-weight="bold"`, s.title)
	g.text(16, y+36, `font-size="12"`, summary(s))
	marksTop := y + 48
	top := marksTop + markRows*markRowH + 4
	bottom := top + float64(len(lanes))*laneH
	for i, ln := range lanes {
		ly := top + float64(i)*laneH
		g.f(`<g class="lane" data-lane="%s">`, esc(ln.label))
		g.f(`<rect x="8" y="%.1f" width="%d" height="%d" fill="%s"/>`, ly, laneRight-8+10, laneH, []string{"#f7f7f7", "#ffffff"}[i%2])
		g.text(14, ly+15, fmt.Sprintf(`font-size="12" font-weight="bold" fill="%s"`, ln.color), ln.label)
		g.text(14, ly+29, `font-size="10" fill="#555"`, ln.sub)
		ln.draw(ly)
		g.f(`</g>`)
	}

	// Time axis, seconds from the start mark.
	g.f(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333"/>`, laneLeft, bottom, laneRight, bottom)
	step := 60.0
	for _, st := range []float64{0.5, 1, 2, 5, 10, 15, 30} {
		if span/st <= 16 {
			step = st
			break
		}
	}
	for t := 0.0; t <= span; t += step {
		x := xOf(s.t0 + t)
		g.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`, x, bottom, x, bottom+5)
		g.text(x, bottom+18, `font-size="11" text-anchor="middle"`, fmt.Sprintf("%g s", t))
	}

	// Marks: a numbered line each, numbers staggered so close ones stay legible.
	lastX := []float64{-100, -100, -100}
	for i, m := range marks {
		x := xOf(m.t)
		row := svgrow.Place(lastX, x)
		cy := marksTop + float64(markRows-1-row)*markRowH + 8
		dash := ` stroke-dasharray="4 3"`
		if m.kind != "mark" {
			dash = ""
		}
		g.f(`<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"%s/>`, m.kind, x, cy+8, x, bottom, markColor[m.kind], dash)
		g.f(`<circle cx="%.1f" cy="%.1f" r="8" fill="%s"/>`, x, cy, markColor[m.kind])
		g.text(x, cy+4, `font-size="10" fill="white" text-anchor="middle" font-weight="bold"`, fmt.Sprint(i+1))
	}
	listTop := bottom + 38
	half := max((len(marks)+1)/2, 1)
	for i, m := range marks {
		x, ly := 16.0+float64(i/half)*(svgWidth/2), listTop+float64(i%half)*listLineH
		g.f(`<circle cx="%.1f" cy="%.1f" r="6" fill="%s"/>`, x+6, ly-4, markColor[m.kind])
		label := m.what
		if len(label) > 90 {
			label = label[:87] + "..."
		}
		g.text(x+18, ly, `font-size="11"`, fmt.Sprintf("%6.1f s  %s", m.t-s.t0, label))
	}
	g.f(`</g>`)
	return listTop + float64(half)*listLineH
}

// summary is the panel's line of figures, the ones scenario.sh checks.
func summary(s *scenario) string {
	failed := 0
	for _, l := range s.load {
		if !l.ok {
			failed++
		}
	}
	ready, most := map[string]bool{}, 0
	for _, p := range s.pods {
		ready[p.name] = p.ready
		n := 0
		for _, r := range ready {
			if r {
				n++
			}
		}
		most = max(most, n)
	}
	low, lowest := "none recorded", 0
	for i, d := range s.ds {
		if i == 0 || d.available < lowest {
			low, lowest = fmt.Sprint(d.available), d.available
		}
	}
	return fmt.Sprintf("%d load pods, %d FAILED, %d CreateContainer calls failed; at most %d plugin pods Ready at once; lowest numberAvailable %s; %.1f s",
		len(s.load), failed, s.createErrs, most, low, s.t1-s.t0)
}

func (g *figure) legend(y float64) float64 {
	g.f(`<g class="legend">`)
	g.text(16, y+14, `font-size="13" font-weight="bold"`, "Legend")
	x, row := 16.0, y+36
	item := func(draw string, label string) {
		w := 34 + float64(len([]rune(label)))*6.3
		if x+w > svgWidth-16 {
			x, row = 16, row+22
		}
		g.f(draw, x, row)
		g.text(x+34, row+4, `font-size="11"`, label)
		x += w + 22
	}
	c := palette[0]
	item(`<g transform="translate(%.1f %.1f)"><rect y="-5" width="28" height="10" fill="`+c+`"/></g>`, "plugin pod Ready")
	item(`<g transform="translate(%.1f %.1f)"><rect y="-4" width="28" height="8" fill="`+c+`" fill-opacity="0.3"/></g>`, "plugin pod not Ready")
	item(`<g transform="translate(%.1f %.1f)"><rect y="-4" width="28" height="8" fill="`+c+`" fill-opacity="0.25" stroke="`+c+`" stroke-dasharray="3 2"/></g>`, "being deleted")
	item(`<g transform="translate(%.1f %.1f)"><rect y="-7" width="28" height="14" fill="`+c+`"/></g>`, "the instance containerd delivers to (the pod's colour)")
	item(`<g transform="translate(%.1f %.1f)"><rect x="8" y="-5" width="2" height="10" fill="`+okColor+`"/><rect x="18" y="-5" width="2" height="10" fill="`+lossColor+`"/></g>`,
		"load pod Ready (green) or FAILED (red), in the lane of the instance that stamped it")
	item(`<g transform="translate(%.1f %.1f)"><rect y="-8" width="28" height="16" fill="`+lossColor+`" fill-opacity="0.35"/></g>`, "DaemonSet numberAvailable 0")
	for _, k := range []struct{ kind, label string }{{"switch", "containerd switched the active instance"}, {"kill", "kill -9"}, {"mark", "the scenario's other steps"}} {
		item(`<g transform="translate(%.1f %.1f)"><line x1="14" y1="-9" x2="14" y2="9" stroke="`+markColor[k.kind]+`" stroke-width="1.5"/><circle cx="14" r="7" fill="`+markColor[k.kind]+`"/></g>`, k.label)
	}
	g.f(`</g>`)
	return row + 16
}
