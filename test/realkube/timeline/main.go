// Command timeline draws the records of the real-Kubernetes e2e
// (test/realkube/run.sh and scenario.sh) as one SVG timeline of the
// DaemonSet rollouts, for docs/ and the proposal: what Kubernetes saw (the
// plugin pods' Ready, the DaemonSet's numberAvailable) next to what the
// runtime did (the instance containerd delivered to, which instance stamped
// each pod created meanwhile), so a reader sees the handover without
// reading logs.
//
//	go run ./test/realkube/timeline -ev $R/ev -containerd-log $R/containerd.log \
//		-scenarios s1,s2,s3 -titles 's1=Rollout v1→v2,s2=...' -o docs/kubernetes-rollout.svg
//
// It only reads the records: a malformed line is an error naming its file
// and line, never a guess.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "timeline:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("timeline", flag.ContinueOnError)
	ev := fs.String("ev", "", "the scenarios' records ($R/ev of test/realkube/run.sh)")
	clog := fs.String("containerd-log", "", "containerd's log ($R/containerd.log)")
	list := fs.String("scenarios", "", "the scenarios to draw, comma-separated, one panel each in this order")
	titles := fs.String("titles", "", "panel titles: 'SC=title,SC=title' (default: the scenario's name)")
	heading := fs.String("heading", "nri-handover on Kubernetes: the annotator DaemonSet rolled out on a real kubelet and containerd", "the figure's heading")
	out := fs.String("o", "-", "the SVG file to write, - for stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ev == "" || *clog == "" || *list == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: timeline -ev DIR -containerd-log FILE -scenarios s1,s2 [-titles 's1=...'] [-o FILE]")
	}
	title := map[string]string{}
	for _, kv := range strings.Split(*titles, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("-titles: %q is not SC=title", kv)
		}
		title[k] = v
	}
	tks, err := readTakeovers(*clog)
	if err != nil {
		return err
	}
	var scs []*scenario
	for _, name := range strings.Split(*list, ",") {
		s, err := readScenario(*ev, name)
		if err != nil {
			return err
		}
		if t := title[name]; t != "" {
			s.title = t
		}
		scs = append(scs, s)
	}
	svg := render(*heading, scs, tks)
	if *out == "-" {
		_, err = stdout.Write(svg)
		return err
	}
	return os.WriteFile(*out, svg, 0o644)
}
