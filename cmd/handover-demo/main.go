// Command handover-demo shows a make-before-break plugin rollout on one node:
// an in-memory runtime keeps creating containers while instances of the
// example plugin (examples/annotator, real processes) are rolled out, rolled
// back, frozen and killed with SIGKILL, first without handover (as upstream
// NRI behaves today) and then with it. Every container's adjustment records
// which instance handled its creation, so the demo computes its verdict from
// those records (exactly once, duplicates, lost, the longest time without an
// active instance) and draws them as an SVG timeline.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/nri-handover/nri/examples/annotator/annotator"
)

// handledBy is the annotation examples/annotator stamps: "version/instance"
// of the instance that handled the creation.
const handledBy = annotator.HandledBy

// config is what the flags choose.
type config struct {
	rate      float64       // container creations per second
	duration  time.Duration // traffic of the handover part; the part without handover gets a third
	handovers int           // rollouts in the handover part (the first one includes both kills)
	grace     time.Duration // the runtime's standby grace (adaptation.WithStandbyGrace)
	svgPath   string        // where the timeline goes

	out io.Writer
	tty bool // out is a terminal: the progress line is redrawn in place
}

func main() {
	cfg := config{out: os.Stdout, tty: isTerminal(os.Stdout)}
	flag.Float64Var(&cfg.rate, "rate", 200, "container creations per second")
	flag.DurationVar(&cfg.duration, "duration", 8*time.Second,
		"traffic time of the handover part (the part without handover runs a third of it)")
	flag.IntVar(&cfg.handovers, "handovers", 3,
		"rollouts in the handover part (at least 1; the first includes the two kill -9 scenarios)")
	flag.DurationVar(&cfg.grace, "standby-grace", 30*time.Second,
		"how long a superseded instance stands by (adaptation.WithStandbyGrace); 0 is the runtime's default, no standby, and skips the kill of the active instance")
	flag.StringVar(&cfg.svgPath, "svg", filepath.Join(os.TempDir(), "nri-handover-timeline.svg"),
		"where to write the SVG timeline")
	flag.Parse()

	rep, err := run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "handover-demo: %v\n", err)
		os.Exit(1)
	}
	if !rep.handover.verdict.ok() {
		fmt.Fprintln(os.Stderr, "handover-demo: the handover part did not handle every container exactly once")
		os.Exit(1)
	}
}

// report is what a run found, for the test.
type report struct {
	upstream, handover *part
	svg                string
}

func (c config) validate() error {
	switch {
	case c.rate <= 0:
		return errors.New("-rate must be positive")
	case c.duration <= 0:
		return errors.New("-duration must be positive")
	case c.handovers < 1:
		return errors.New("-handovers must be at least 1")
	case c.grace < 0:
		return errors.New("-standby-grace must be 0 (no standby, the runtime's default) or positive")
	}
	return nil
}

func run(ctx context.Context, cfg config) (*report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	con := &console{w: cfg.out, tty: cfg.tty}
	// Unix socket paths are short: the runtime's socket goes under /tmp.
	dir, err := os.MkdirTemp("/tmp", "nri-demo")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	con.say("building the example plugin (examples/annotator)")
	bin := filepath.Join(dir, "annotator")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/nri-handover/nri/examples/annotator")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the example plugin: %w\n%s", err, out)
	}
	con.say("traffic: %.0f container creations per second; rollouts with handover: %d; %s", cfg.rate, cfg.handovers, standbyText(cfg.grace))

	rep := &report{}
	con.say("")
	con.say("== 1. Handover off (WithPluginHandover(false): upstream NRI's behaviour), maxSurge=1: both instances get every event ==")
	if rep.upstream, err = runPart(ctx, con, cfg, dir, bin, false); err != nil {
		return nil, err
	}
	con.say("")
	if cfg.grace > 0 {
		con.say("== 2. With handover (WithStandbyGrace %s): rollouts, a kill -9 mid-handover, a kill -9 of the active instance ==", cfg.grace)
	} else {
		con.say("== 2. With handover, no standby (the runtime's default): rollouts, a kill -9 mid-handover ==")
	}
	if rep.handover, err = runPart(ctx, con, cfg, dir, bin, true); err != nil {
		return nil, err
	}

	if err := os.MkdirAll(filepath.Dir(cfg.svgPath), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(cfg.svgPath, renderSVG(rep.upstream, rep.handover), 0o644); err != nil {
		return nil, fmt.Errorf("write the timeline: %w", err)
	}
	rep.svg = cfg.svgPath
	con.say("")
	con.say("exactly once: the container was created with one instance's stamp; by both: both instances adjusted it, so its")
	con.say("creation failed; by none: created without any instance's stamp (no instance was active)")
	con.say("without handover: %s", rep.upstream.verdict)
	con.say("with handover:    %s", rep.handover.verdict)
	con.say("timeline: %s", cfg.svgPath)
	return rep, nil
}

// standbyText says what the grace means for the handover part.
func standbyText(grace time.Duration) string {
	if grace == 0 {
		return "no standby (-standby-grace=0, the runtime's default): a superseded instance serves no events again"
	}
	return fmt.Sprintf("standby grace %s", grace)
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
