package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nri-handover/nri/pkg/adaptation"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// part is one run of the scenario on a runtime of its own: with or without
// handover.
type part struct {
	handover   bool
	title      string
	start, end time.Time // traffic
	recs       []ctrRecord
	tl         *timeline
	verdict    verdict
}

// director runs one part's script: it prints each step, marks it on the
// timeline, and paces the steps so the traffic lasts about the part's duration.
type director struct {
	con   *console
	tl    *timeline
	fleet *fleet
	w     *workload
	pause time.Duration // traffic between two steps
}

func (d *director) say(kind markKind, format string, args ...any) {
	label := fmt.Sprintf(format, args...)
	d.tl.mark(kind, "%s", label)
	d.con.say("  %s", label)
}

// dwell lets containers be created for one pause (and at least a few).
func (d *director) dwell() error { return d.w.dwell(d.pause, 3) }

func (d *director) start(version, instance string, generation uint64) (*proc, error) {
	return d.fleet.start(version, instance, generation)
}

func runPart(ctx context.Context, con *console, cfg config, dir, bin string, handover bool) (*part, error) {
	p := &part{handover: handover, title: "Handover off (this module with WithPluginHandover(false), as upstream NRI behaves): both instances get every event"}
	duration, pauses := cfg.duration/3, 3
	if handover {
		p.title = "Handover on, with WithStandbyGrace (not the default): rollouts, a successor killed mid-handover, the active instance killed while a standby waits"
		duration, pauses = cfg.duration, 7+2*(cfg.handovers-1)
		if cfg.grace == 0 {
			p.title = "Handover on, no standby (the default): rollouts, a successor killed mid-handover"
			pauses -= 2
		}
	}
	sub := filepath.Join(dir, fmt.Sprintf("handover-%v", handover))
	if err := os.MkdirAll(sub, 0o700); err != nil {
		return nil, err
	}
	tl := newTimeline(handover)
	p.tl = tl
	opts := []adaptation.Option{adaptation.WithPluginHandover(handover), adaptation.WithMetrics(tl), adaptation.WithLogger(tl)}
	if handover {
		opts = append(opts, adaptation.WithStandbyGrace(cfg.grace))
	}
	rt, err := testruntime.New(testruntime.WithDir(sub), testruntime.WithName("demo-runtime", "v1"),
		testruntime.WithAdaptationOptions(opts...))
	if err != nil {
		return nil, err
	}
	if err := rt.Start(); err != nil {
		return nil, err
	}
	defer rt.Stop()
	f := &fleet{bin: bin, socket: rt.SocketPath(), dir: sub, tl: tl}
	defer f.killAll()

	d := &director{con: con, tl: tl, fleet: f, pause: duration / time.Duration(pauses)}
	d.say(markAction, "pod-a starts: annotator v1 (instance pod-a, generation 1)")
	tl.expectFresh("pod-a")
	a, err := d.start("v1", "pod-a", 1)
	if err != nil {
		return nil, err
	}
	if err := a.waitReady(); err != nil {
		return nil, err
	}
	d.con.say("  pod-a is ready: containers are being created (%.0f/s)", cfg.rate)
	p.start = time.Now()
	d.w = startWorkload(rt, cfg.rate)
	stopProgress := d.progress(ctx, p)
	if handover {
		err = d.withHandover(a, cfg.handovers, cfg.grace > 0)
	} else {
		err = d.withoutHandover(a)
	}
	d.w.stop()
	p.end = time.Now()
	tl.close(p.end)
	stopProgress()
	if err != nil {
		return nil, fmt.Errorf("%w\nthe adaptation's last log lines:\n%s", err, tl.recentLog())
	}
	p.recs = d.w.records()
	p.verdict = computeVerdict(p)
	p.summarize(con)
	return p, nil
}

// withoutHandover: a surge rollout as upstream NRI sees it. Both instances
// are connected at once and both receive every event.
func (d *director) withoutHandover(a *proc) error {
	if err := d.dwell(); err != nil {
		return err
	}
	d.say(markAction, "rollout: pod-b starts next to pod-a: annotator v2 (instance pod-b, generation 2)")
	d.tl.expectFresh("pod-b")
	b, err := d.start("v2", "pod-b", 2)
	if err != nil {
		return err
	}
	if err := b.waitReady(); err != nil {
		return err
	}
	d.con.say("    pod-b ready: %v; pod-a ready: %v (both receive every event)", b.ready(), a.ready())
	if err := d.dwell(); err != nil {
		return err
	}
	d.say(markAction, "the DaemonSet controller deletes pod-a (SIGTERM)")
	a.term()
	return d.dwell()
}

// withHandover: the first rollout is hit by both failures (its successor is
// killed mid-handover, then, with a standby, the new active instance is
// killed while the old one stands by); the others are plain rollouts and
// rollbacks. Without a standby the second kill is skipped: nothing could
// take over until the killed container restarts, as without handover.
func (d *director) withHandover(a *proc, rollouts int, standby bool) error {
	tl := d.tl
	supersededSays := "pod-a stands by"
	if !standby {
		supersededSays = "pod-a is superseded (no standby) and serves no events"
	}
	var steps []func() error
	steps = append(steps,
		d.dwell,
		func() error {
			d.say(markAction, "rollout: pod-b starts next to pod-a: annotator v2 (instance pod-b, generation 2)")
			frozen := make(chan struct{})
			tl.freezeOnTakeover("pod-b", func() {
				if p := d.fleet.running("pod-b"); p != nil && p.freeze() == nil {
					close(frozen)
				}
			})
			if _, err := d.start("v2", "pod-b", 2); err != nil {
				return err
			}
			select {
			case <-frozen:
			case <-time.After(10 * time.Second):
				return errNotFrozen
			}
			d.say(markAction, "pod-b hangs mid-handover (SIGSTOP while it synchronizes); pod-a keeps serving")
			return nil
		},
		d.dwell,
		func() error {
			d.say(markKill, "kill -9 pod-b, the successor, mid-handover")
			if err := d.kill("pod-b"); err != nil {
				return err
			}
			if err := tl.waitOutcome("failed", 1); err != nil {
				return err
			}
			d.con.say("    the adaptation dropped the candidate; pod-a stayed active (ready: %v)", a.ready())
			return nil
		},
		d.dwell,
		func() error {
			return d.takeOver("pod-b's container restarts (kubelet) and takes over; "+supersededSays, "v2", "pod-b", 2)
		},
		d.dwell,
	)
	if standby {
		steps = append(steps, func() error {
			// Between two requests: a request in flight to an instance
			// that is killed dies with it, and the runtime proceeds
			// without the plugin as the failure policy says (make soak
			// covers that case). Traffic resumes once the adaptation has
			// reserved the sync gate for the standby's reactivation, so
			// the creations that follow wait for it.
			d.w.pause()
			d.say(markKill, "kill -9 pod-b, the active instance, between two requests, while pod-a stands by")
			removed := tl.removals()
			tl.lose("pod-b", time.Now())
			err := d.kill("pod-b")
			if err == nil {
				err = tl.waitRemoved(removed + 1)
			}
			d.w.resume()
			if err != nil {
				return err
			}
			if err := tl.waitOutcome("reactivated", 1); err != nil {
				return err
			}
			d.con.say("    pod-a reactivated (ready: %v)", a.ready())
			return nil
		},
			d.dwell,
			func() error {
				return d.takeOver("pod-b's container restarts again and takes over; pod-a stands by", "v2", "pod-b", 2)
			},
			d.dwell,
		)
	} else {
		steps = append(steps, func() error {
			d.con.say("  (no standby: the kill -9 of the active instance is skipped; nothing would take over until its container restarts)")
			return nil
		})
	}
	steps = append(steps,
		func() error {
			d.say(markAction, "the DaemonSet controller deletes pod-a (SIGTERM)")
			a.term()
			d.say(markAction, "a superseded pod-a registers again (its container restarted before the pod was deleted)")
			again, err := d.start("v1", "pod-a", 1)
			if err != nil {
				return err
			}
			again.waitExit()
			d.con.say("    refused by the runtime, as expected (its log: %s)", again.lastLine())
			return nil
		},
		d.dwell,
	)
	for i := 2; i <= rollouts; i++ {
		prev := podName(i - 1)
		version, what := "v1", "rollback"
		if i%2 == 1 {
			version, what = "v2", "rollout"
		}
		name := podName(i)
		gen := uint64(i + 1)
		steps = append(steps,
			func() error {
				return d.takeOver(fmt.Sprintf("%s: %s starts: annotator %s (instance %s, generation %d)", what, name, version, name, gen),
					version, name, gen)
			},
			d.dwell,
			func() error {
				d.say(markAction, "the DaemonSet controller deletes %s (SIGTERM)", prev)
				p := d.fleet.running(prev)
				if p == nil {
					return fmt.Errorf("%s is not running", prev)
				}
				p.term()
				return nil
			},
			d.dwell,
		)
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// kill is kill -9 of instance's running process.
func (d *director) kill(instance string) error {
	p := d.fleet.running(instance)
	if p == nil {
		return fmt.Errorf("%s is not running", instance)
	}
	p.kill()
	return nil
}

// podName is the instance of the n-th rollout: pod-b, pod-c, ...
func podName(n int) string { return fmt.Sprintf("pod-%c", 'a'+n) }

// takeOver starts an instance and waits until it is the active one.
func (d *director) takeOver(label, version, instance string, generation uint64) error {
	d.say(markAction, "%s", label)
	p, err := d.start(version, instance, generation)
	if err != nil {
		return err
	}
	return p.waitReady()
}

// progress keeps one line up to date while the part runs; the returned
// function stops it.
func (d *director) progress(ctx context.Context, p *part) func() {
	every := time.Second
	if d.con.tty {
		every = 100 * time.Millisecond
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	name := "upstream"
	if p.handover {
		name = "handover"
	}
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			recs := d.w.records()
			v := tally(recs)
			line := fmt.Sprintf("  [%s %4.1fs] %d created: %s | failed %d | lost %d",
				name, time.Since(p.start).Seconds(), len(recs), v.byInstanceID(), v.failed, v.lost)
			if d.con.tty && len(line) > 79 { // a wrapped line cannot be redrawn in place
				line = line[:76] + "..."
			}
			d.con.progress(line)
		}
	}()
	return func() {
		close(done)
		<-stopped
		d.con.endProgress()
	}
}

// summarize prints the part's counts, its verdict and its handovers.
func (p *part) summarize(con *console) {
	t := tally(p.recs)
	con.say("")
	con.say("  %d containers in %.1fs: %s; creation failed: %d", len(p.recs), p.end.Sub(p.start).Seconds(), t.byInstance(), t.failed)
	shown := 0
	for _, r := range p.recs {
		if r.err != nil && shown < 2 {
			con.say("    FAILED %s: %v", r.id, r.err)
			shown++
		}
	}
	con.say("  => %s", p.verdict)
	if !p.handover {
		if p.verdict.duplicates > 0 {
			con.say("     both instances adjusted the same containers: their adjustments conflict and creation fails")
		}
		return
	}
	con.say("  handovers (the adaptation's HandoverMetrics):")
	p.tl.mu.Lock()
	defer p.tl.mu.Unlock()
	for _, o := range p.tl.outcomes {
		con.say("    %6.0f ms  %-11s took %-9s runtime events waited %s", o.t.Sub(p.tl.start).Seconds()*1000,
			o.outcome, o.duration.Round(10*time.Microsecond), o.runtimeWait.Round(10*time.Microsecond))
	}
	for i, w := range p.tl.warnings {
		if i == 3 {
			con.say("    ... %d more adaptation warnings", len(p.tl.warnings)-3)
			break
		}
		con.say("    adaptation: %s", w)
	}
}

// counts is how a list of creations was handled.
type counts struct {
	stamps       map[string]int // by "version/instance"
	lost, failed int
}

func tally(recs []ctrRecord) counts {
	c := counts{stamps: map[string]int{}}
	for _, r := range recs {
		switch {
		case r.err != nil:
			c.failed++
		case r.stamp == "":
			c.lost++
		default:
			c.stamps[r.stamp]++
		}
	}
	return c
}

// byInstanceID is the short form of byInstance: instance ids only.
func (c counts) byInstanceID() string {
	ids := map[string]int{}
	for k, n := range c.stamps {
		_, id, _ := strings.Cut(k, "/")
		ids[id] += n
	}
	return joinCounts(ids)
}

func (c counts) byInstance() string { return joinCounts(c.stamps) }

func joinCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none handled"
	}
	return strings.Join(parts, ", ")
}
