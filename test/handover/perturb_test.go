package handover_test

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/nri-handover/nri/pkg/adaptation"
)

// perturbation drives adaptation.WithScheduleHook from a seed: at every
// boundary of registration and handover the goroutine crossing it goes on,
// yields a few times, or pauses for up to two milliseconds, as the seed's
// stream says. The exactly-once runs thereby try other interleavings than
// the one the machine happens to produce; a failing run prints its seed
// and NRI_HANDOVER_SEED replays the same perturbation plan (the machine's
// own timing still varies, so a replay is likely, not certain, to fail the
// same way).
type perturbation struct {
	mu   sync.Mutex
	rng  *rand.Rand
	hits map[string]int
}

func newPerturbation(seed uint64) *perturbation {
	return &perturbation{rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), hits: map[string]int{}}
}

func (p *perturbation) option() adaptation.Option {
	return adaptation.WithScheduleHook(p.at)
}

func (p *perturbation) at(point string) {
	p.mu.Lock()
	p.hits[point]++
	r := p.rng.IntN(10)
	n := p.rng.IntN(2000)
	p.mu.Unlock()
	switch {
	case r < 5:
	case r < 8:
		for range n%8 + 1 {
			runtime.Gosched()
		}
	default:
		time.Sleep(time.Duration(n) * time.Microsecond)
	}
}

// counts reports how often each boundary was crossed.
func (p *perturbation) counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.hits))
	for k, v := range p.hits {
		out[k] = v
	}
	return out
}

// perturbSeeds is how many seeds the exactly-once table runs per policy:
// NRI_PERTURB_SEEDS (make test: 2; make soak sets more).
func perturbSeeds() int {
	if n, err := strconv.Atoi(os.Getenv("NRI_PERTURB_SEEDS")); err == nil && n > 0 {
		return n
	}
	return 2
}
