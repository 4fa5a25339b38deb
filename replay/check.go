package replay

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu/sim"
)

// Opener opens a fresh Source over the same trace for each run.
type Opener func() (Source, error)

// Run replays the trace once under specs and seed and explains the outcome.
func Run(open Opener, base Config, site sim.SiteFunc, specs []faults.Spec, seed uint64) ([]Finding, error) {
	src, err := open()
	if err != nil {
		return nil, err
	}
	cfg := base
	cfg.Seed = seed
	var plan *faults.Plan
	if len(specs) > 0 {
		plan = faults.NewPlan(specs, seed)
		cfg.Faults = plan
	}
	out, err := Replay(src, cfg)
	if err != nil {
		return nil, err
	}
	desc, sync, drops := "", false, ""
	if plan != nil {
		desc = faults.Describe(specs)
		sync = plan.Sync()
		for _, in := range plan.Injections() {
			if in.Drop && out.Stuck {
				if drops != "" {
					drops += "; "
				}
				drops += in.String()
			}
		}
	}
	fs := Explain(out, site, desc, sync, drops)
	for i := range fs {
		s := seed
		fs[i].Seed = &s
	}
	return fs, nil
}

// Dedup keeps the first finding of each signature, in order.
func Dedup(fs []Finding) []Finding {
	seen := map[string]bool{}
	var out []Finding
	for _, f := range fs {
		if sig := f.Signature(); !seen[sig] {
			seen[sig] = true
			out = append(out, f)
		}
	}
	return out
}

// Explore replays the trace under specs for seeds 0..n-1 (starting at
// first) and returns the findings deduplicated by signature, each with the
// first seed that showed it.
func Explore(open Opener, base Config, site sim.SiteFunc, specs []faults.Spec, first uint64, n int, progress func(done int)) ([]Finding, error) {
	var all []Finding
	for i := range n {
		fs, err := Run(open, base, site, specs, first+uint64(i))
		if err != nil {
			return nil, err
		}
		all = Dedup(append(all, fs...))
		if progress != nil {
			progress(i + 1)
		}
	}
	return all, nil
}

// DelaySeeds is how many seeds Check runs the delay fault under.
const DelaySeeds = 8

// Check runs the standard battery: as recorded, sync, mutate, delay over
// several seeds, and for each rank a run where its messages arrive late (so
// every AnySource receive gets to see its other candidates). It returns the
// findings deduplicated.
func Check(open Opener, base Config, site sim.SiteFunc, ranks int) ([]Finding, error) {
	type step struct {
		spec  string
		seeds int
	}
	steps := []step{{"", 1}, {"sync", 1}, {"mutate", 1}, {"delay", DelaySeeds}}
	for r := range min(ranks, 64) {
		steps = append(steps, step{fmt.Sprintf("delay:src=%d,d=1ms", r), 1})
	}
	var all []Finding
	for _, st := range steps {
		var specs []faults.Spec
		if st.spec != "" {
			s, err := faults.Parse(st.spec)
			if err != nil {
				return nil, err
			}
			specs = []faults.Spec{s}
		}
		fs, err := Explore(open, base, site, specs, 0, st.seeds, nil)
		if err != nil {
			return nil, err
		}
		all = Dedup(append(all, fs...))
	}
	return all, nil
}
