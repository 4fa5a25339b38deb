package harness

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Flags of `go test`, to rerun one seed or widen a sweep without editing the
// test. They are the only package state: go test parses them once.
var (
	flagSeed   = flag.Int64("p2ptrace.seed", -1, "run only this seed (the repro line of a failure names it)")
	flagSeeds  = flag.Int("p2ptrace.seeds", 0, "number of seeds per fault plan, overriding harness.Seeds")
	flagFaults = flag.String("p2ptrace.fault", "", "run only this fault plan (specs joined by ';'), overriding harness.Faults")
	flagDir    = flag.String("p2ptrace.dir", "", "directory for the traces of failing runs (default: a temporary directory)")
)

// Option configures Run.
type Option func(*config)

type config struct {
	plans   [][]string
	seeds   int
	expect  []string
	timeout time.Duration
	launch  []gpu.Option
}

// Faults adds a fault plan: the specs together (see package faults). Each
// Faults option is one plan; the plain run without faults always runs too.
func Faults(specs ...string) Option {
	return func(c *config) { c.plans = append(c.plans, specs) }
}

// Seeds sets how many scheduler seeds each plan runs under (default 10).
func Seeds(n int) Option { return func(c *config) { c.seeds = n } }

// Expect makes the test pass only if these finding kinds appear (for tests
// of known-bad patterns): "deadlock", "hang", "missing-wait", "rank-error", ...
func Expect(kinds ...string) Option { return func(c *config) { c.expect = append(c.expect, kinds...) } }

// Timeout bounds one run in wall-clock time (default 10s), host code
// included: past it the run ends with a no-progress finding naming the rank
// that runs and its last runtime call (see gpu.RunTimeout). A rank spinning
// in code of its own cannot be stopped (Go cannot kill a goroutine): it is
// left running until it next calls the runtime.
func Timeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// Launch passes options through to gpu.Launch (eager limit, link model).
func Launch(opts ...gpu.Option) Option {
	return func(c *config) { c.launch = append(c.launch, opts...) }
}

// KindRankError is the finding kind of a rank's own error: the program's
// check failed or a call returned an error it passed on.
const KindRankError = "rank-error"

// Failure is one failing run.
type Failure struct {
	Seed    uint64
	Plan    []string // the fault specs
	Kinds   []string
	Err     error
	Minimal []faults.Injection // the smallest set of injections that still fails
	// Unshrunk is the number of injections of a run with more than
	// faults.MaxKept of them: too many to shrink (Minimal is then nil).
	Unshrunk  int
	TracePath string
}

// Run runs fn on ranks ranks under each seed and fault plan. It fails t with
// the report of the first failing run, a count of the others, and two
// commands that reproduce it. With Expect, it fails t unless the expected
// kinds appear.
func Run(t testing.TB, ranks int, fn func(r *gpu.Rank) error, opts ...Option) []Failure {
	t.Helper()
	c := config{seeds: 10, timeout: 10 * time.Second}
	for _, o := range opts {
		o(&c)
	}
	plans := append([][]string{nil}, c.plans...)
	if *flagFaults != "" {
		plans = [][]string{strings.Split(*flagFaults, ";")}
	}
	if *flagSeeds > 0 {
		c.seeds = *flagSeeds
	}
	seeds := make([]uint64, 0, c.seeds)
	if *flagSeed >= 0 {
		seeds = append(seeds, uint64(*flagSeed))
	} else {
		for s := range c.seeds {
			seeds = append(seeds, uint64(s))
		}
	}
	var failures []Failure
	for _, plan := range plans {
		specs, err := faults.ParseAll(plan)
		if err != nil {
			t.Fatalf("harness: %v", err)
			return nil
		}
		for _, seed := range seeds {
			if f := runOnce(ranks, fn, &c, specs, plan, seed); f != nil {
				failures = append(failures, *f)
			}
		}
	}
	if len(c.expect) > 0 {
		seen := map[string]bool{}
		for _, f := range failures {
			for _, k := range f.Kinds {
				seen[k] = true
			}
		}
		var missing []string
		for _, k := range c.expect {
			if !seen[k] {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			t.Errorf("harness: expected findings %v did not appear in %d runs (seen: %v)", missing, len(plans)*len(seeds), keys(seen))
		}
		return failures
	}
	if len(failures) > 0 {
		t.Errorf("%s", report(t, failures, ranks, fn, &c))
	}
	return failures
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func runOnce(ranks int, fn func(*gpu.Rank) error, c *config, specs []faults.Spec, plan []string, seed uint64) *Failure {
	plan0 := faults.NewPlan(specs, seed)
	err := launch(ranks, fn, c, plan0, seed, hashOnly{})
	if err == nil {
		return nil
	}
	f := &Failure{Seed: seed, Plan: plan, Kinds: kindsOf(err), Err: err}
	// Shrinking replays subsets of the injections: it needs all of them (a
	// plan keeps at most faults.MaxKept).
	if inj := plan0.Injections(); len(inj) > 0 && plan0.Complete() {
		f.Minimal = shrink(ranks, fn, c, specs, seed, inj, f.Kinds)
	} else if !plan0.Complete() {
		f.Unshrunk = plan0.Count()
	}
	return f
}

func launch(ranks int, fn func(*gpu.Rank) error, c *config, inj faults.Injector, seed uint64, sink gpu.EventSink) error {
	opts := append(slices.Clone(c.launch), gpu.Seed(seed), gpu.Faults(inj), gpu.WallTimeout(c.timeout), gpu.RunTimeout(c.timeout))
	if sink != nil {
		opts = append(opts, gpu.RecordTo(sink))
	}
	return gpu.Launch(ranks, fn, opts...)
}

func kindsOf(err error) []string {
	var kinds []string
	var re *gpu.RunError
	if errors.As(err, &re) {
		for _, p := range re.Problems {
			kinds = append(kinds, string(p.Kind))
		}
		for _, e := range re.RankErrors {
			if e != nil && !errors.Is(e, gpu.ErrStuck) {
				kinds = append(kinds, KindRankError)
				break
			}
		}
	} else if errors.Is(err, gpu.ErrWatchdog) {
		kinds = append(kinds, "watchdog")
	}
	if len(kinds) == 0 {
		kinds = append(kinds, KindRankError)
	}
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

// shrink reduces the concrete injections of a failing run to a minimal set
// that still fails with the same kinds (delta debugging, ddmin).
func shrink(ranks int, fn func(*gpu.Rank) error, c *config, specs []faults.Spec, seed uint64, inj []faults.Injection, kinds []string) []faults.Injection {
	sync, mutate := false, false
	for _, s := range specs {
		sync = sync || s.Kind == faults.Sync
		mutate = mutate || s.Kind == faults.Mutate
	}
	fails := func(set []faults.Injection) bool {
		err := launch(ranks, fn, c, faults.Fixed(sync, mutate, set), seed, hashOnly{})
		return err != nil && slices.Equal(kindsOf(err), kinds)
	}
	if fails(nil) {
		return nil
	}
	cur, n := inj, 2
	for len(cur) >= 2 && n <= len(cur) {
		chunk := (len(cur) + n - 1) / n
		reduced := false
		for i := 0; i < len(cur); i += chunk {
			sub := cur[i:min(i+chunk, len(cur))]
			rest := append(slices.Clone(cur[:i]), cur[min(i+chunk, len(cur)):]...)
			if fails(sub) {
				cur, n, reduced = sub, 2, true
				break
			}
			if fails(rest) {
				cur, n, reduced = rest, max(n-1, 2), true
				break
			}
		}
		if !reduced {
			if n == len(cur) {
				break
			}
			n = min(2*n, len(cur))
		}
	}
	return cur
}

// hashOnly records nothing; with it, Launch hashes payloads and so reports
// in-flight mutations.
type hashOnly struct{}

func (hashOnly) Append(*trace.Event) {}
func (hashOnly) AddSite(trace.Site)  {}

var testName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// report renders the first failure, saves its trace, and ends with the repro commands.
func report(t testing.TB, failures []Failure, ranks int, fn func(*gpu.Rank) error, c *config) string {
	f := &failures[0]
	var b strings.Builder
	fmt.Fprintf(&b, "p2ptrace: seed %d", f.Seed)
	if len(f.Plan) > 0 {
		fmt.Fprintf(&b, " under %s", strings.Join(f.Plan, " "))
	}
	fmt.Fprintf(&b, " failed (%s):\n%s\n", strings.Join(f.Kinds, ", "), f.Err)
	if len(f.Minimal) > 0 {
		b.WriteString("minimal injections that still fail:\n")
		for _, in := range f.Minimal {
			fmt.Fprintf(&b, "  %s\n", in)
		}
	}
	if f.Unshrunk > 0 {
		fmt.Fprintf(&b, "not shrunk: %d injections, more than the %d a plan keeps\n", f.Unshrunk, faults.MaxKept)
	}
	if n := len(failures) - 1; n > 0 {
		fmt.Fprintf(&b, "(%d other failing run(s))\n", n)
	}
	path, err := saveTrace(t, f, ranks, fn, c)
	if err != nil {
		fmt.Fprintf(&b, "could not save the trace: %v\n", err)
	}
	f.TracePath = path
	name := t.Name()
	top := strings.SplitN(name, "/", 2)
	run := "^" + top[0] + "$"
	if len(top) > 1 {
		run += "/^" + regexp.QuoteMeta(top[1]) + "$"
	}
	fmt.Fprintf(&b, "reproduce:\n  go test -run '%s' -p2ptrace.seed=%d", run, f.Seed)
	if len(f.Plan) > 0 {
		fmt.Fprintf(&b, " -p2ptrace.fault='%s'", strings.Join(f.Plan, ";"))
	}
	b.WriteString("\n")
	if path != "" {
		b.WriteString("  p2ptrace replay")
		for _, s := range f.Plan {
			fmt.Fprintf(&b, " --fault '%s'", s)
		}
		fmt.Fprintf(&b, " --seed %d %s\n", f.Seed, path)
	}
	return b.String()
}

func saveTrace(t testing.TB, f *Failure, ranks int, fn func(*gpu.Rank) error, c *config) (string, error) {
	dir := *flagDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "p2ptrace-harness")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-seed%d.db", testName.ReplaceAllString(t.Name(), "_"), f.Seed))
	// The trace is recorded without faults, as `p2ptrace record` would: the
	// replay line injects them.
	return path, writeTrace(path, ranks, fn, c, f.Seed)
}
