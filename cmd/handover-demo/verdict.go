package main

import (
	"fmt"
	"time"
)

// verdict is what the records of one part show.
type verdict struct {
	handover bool
	// total creations; once: handled by exactly one instance; duplicates:
	// handled by two (the adaptation refused the conflicting adjustments,
	// so the creation failed); lost: created without any instance's stamp;
	// otherFailed: failed for another reason.
	total, once, duplicates, lost, otherFailed int
	// gap is the longest time without an active instance, from the kill of
	// the active instance to the switch that made another one active; gapWhy
	// says which loss it was.
	gap    time.Duration
	gapWhy string
	// slowest is the longest a container creation took (it waits at the
	// sync gate while an instance is switched in).
	slowest time.Duration
}

func computeVerdict(p *part) verdict {
	v := verdict{handover: p.handover, total: len(p.recs)}
	for _, r := range p.recs {
		switch {
		case r.conflict():
			v.duplicates++
		case r.err != nil:
			v.otherFailed++
		case r.stamp == "":
			v.lost++
		default:
			v.once++
		}
		v.slowest = max(v.slowest, r.end.Sub(r.start))
	}
	tl := p.tl
	tl.mu.Lock()
	defer tl.mu.Unlock()
	v.gap, v.gapWhy = tl.gap, tl.gapWhy
	if !tl.lostAt.IsZero() { // still nobody active when the traffic stopped
		if g := p.end.Sub(tl.lostAt); g > v.gap {
			v.gap, v.gapWhy = g, "no instance active at the end"
		}
	}
	return v
}

// ok: every container was handled by exactly one instance.
func (v verdict) ok() bool {
	return v.total > 0 && v.once == v.total
}

func (v verdict) String() string {
	s := fmt.Sprintf("handled exactly once: %d of %d; by both (creation failed): %d; by none: %d", v.once, v.total, v.duplicates, v.lost)
	if v.otherFailed > 0 {
		s += fmt.Sprintf("; other failures: %d", v.otherFailed)
	}
	if v.handover {
		s += fmt.Sprintf("; longest time without an active instance: %s", ms(v.gap))
		if v.gapWhy != "" {
			s += " (" + v.gapWhy + ")"
		}
		s += fmt.Sprintf("; slowest container creation: %s", ms(v.slowest))
	}
	return s
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
