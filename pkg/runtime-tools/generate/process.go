package generate

import (
	"strings"

	rspec "github.com/opencontainers/runtime-spec/specs-go"

	nri "github.com/nri-handover/nri/api"
)

// AdjustEnv applies environment changes. A variable that is already set is
// changed (or, marked for removal, dropped) in place, keeping the order of
// the environment; the last change of a name is the one applied to an
// existing variable. New variables are appended in adjustment order.
// Entries without '=' are dropped from the environment whenever it is
// rewritten, as upstream does.
func (g *Generator) AdjustEnv(env []*nri.KeyValue) {
	pending := map[string]*nri.KeyValue{} // by name, the last change wins
	for _, e := range env {
		if e == nil {
			continue
		}
		name, _ := nri.IsMarkedForRemoval(e.Key)
		pending[name] = e
	}
	if len(pending) > 0 && g.Config != nil && g.Config.Process != nil {
		old := g.Config.Process.Env
		g.ClearProcessEnv()
		for _, kv := range old {
			name, value, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			change, changed := pending[name]
			if !changed {
				g.AddProcessEnv(name, value)
				continue
			}
			delete(pending, name)
			if _, remove := change.IsMarkedForRemoval(); !remove {
				g.AddProcessEnv(change.Key, change.Value)
			}
		}
	}
	for _, e := range env {
		if e == nil {
			continue
		}
		if _, remove := e.IsMarkedForRemoval(); remove {
			continue
		}
		if _, isNew := pending[e.Key]; isNew {
			g.AddProcessEnv(e.Key, e.Value)
		}
	}
}

// AdjustArgs replaces the process arguments, if args is not empty.
func (g *Generator) AdjustArgs(args []string) {
	if len(args) > 0 {
		g.SetProcessArgs(args)
	}
}

// AdjustRlimits appends the POSIX resource limits (a limit of a type already
// present is appended too: the runtime applies the last one).
func (g *Generator) AdjustRlimits(rlimits []*nri.POSIXRlimit) error {
	for _, l := range rlimits {
		if l == nil {
			continue
		}
		p := g.process()
		p.Rlimits = append(p.Rlimits, rspec.POSIXRlimit{Type: l.Type, Hard: l.Hard, Soft: l.Soft})
	}
	return nil
}

// AdjustOomScoreAdj sets the OOM score adjustment, overriding the kubelet's.
func (g *Generator) AdjustOomScoreAdj(score *nri.OptionalInt) {
	if score != nil {
		g.SetProcessOOMScoreAdj(int(score.Value))
	}
}

// AdjustIOPriority sets the I/O priority of the process.
func (g *Generator) AdjustIOPriority(ioprio *nri.LinuxIOPriority) {
	if ioprio != nil {
		g.SetProcessIOPriority(ioprio.ToOCI())
	}
}

// SetProcessIOPriority sets the I/O priority; one without a class clears it.
func (g *Generator) SetProcessIOPriority(ioprio *rspec.LinuxIOPriority) {
	p := g.process()
	if ioprio != nil && ioprio.Class == "" {
		ioprio = nil
	}
	p.IOPriority = ioprio
}

// AdjustLinuxScheduler replaces the scheduling attributes of the process.
func (g *Generator) AdjustLinuxScheduler(sch *nri.LinuxScheduler) {
	if sch != nil {
		g.process().Scheduler = sch.ToOCI()
	}
}
