package harness

import (
	"errors"
	"flag"
	"fmt"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
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
	plans    [][]string
	seeds    int
	expect   []verdict.Kind
	timeout  time.Duration
	launch   []gpu.Option
	checks   int
	noChecks bool
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
func Expect(kinds ...verdict.Kind) Option {
	return func(c *config) { c.expect = append(c.expect, kinds...) }
}

// Timeout bounds one run in wall-clock time (default 10s), host code
// included: past it the run ends with a no-progress finding naming the rank
// that runs and its last runtime call (see gpu.RunTimeout). A rank spinning
// in code of its own cannot be stopped (Go cannot kill a goroutine): it is
// left running until it next calls the runtime.
func Timeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// MaxChecks caps the check batteries of one Run (default DefaultMaxChecks):
// one per distinct fault-free run (see Run).
func MaxChecks(n int) Option { return func(c *config) { c.checks = n } }

// NoCheck turns the check battery off: Run then judges the live runs alone.
func NoCheck() Option { return func(c *config) { c.noChecks = true } }

// DefaultMaxChecks is how many distinct fault-free runs one Run checks.
const DefaultMaxChecks = 4

// Launch passes options through to gpu.Launch (eager limit, link model).
func Launch(opts ...gpu.Option) Option {
	return func(c *config) { c.launch = append(c.launch, opts...) }
}

// Failure is one failing run.
type Failure struct {
	Seed  uint64
	Plan  []string // the fault specs
	Kinds []string
	// Findings are the failing run's findings: the live run's, or one the
	// check battery found replaying the run (Replay then says how).
	Findings []verdict.Finding
	// Replay is the replay of the check battery that showed the finding:
	// the faults or forced match ("" for a live run), and its seed.
	Replay     string
	ReplaySeed uint64
	Err        error
	Minimal    []faults.Injection // the smallest set of injections that still fails
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
	var runs []checked // distinct fault-free runs, for the check battery
	seen := map[uint64]bool{}
	for _, plan := range plans {
		specs, err := faults.ParseAll(plan)
		if err != nil {
			t.Fatalf("harness: %v", err)
			return nil
		}
		for _, seed := range seeds {
			var col *replay.Collector
			if len(plan) == 0 && !c.noChecks {
				col = replay.NewCollector()
			}
			f := runOnce(ranks, fn, &c, specs, plan, seed, col)
			if f != nil {
				failures = append(failures, *f)
			}
			if col == nil || f != nil && errors.Is(f.Err, gpu.ErrWatchdog) {
				continue // an abandoned rank may still append to the collector
			}
			if sig := col.Signature(); !seen[sig] {
				seen[sig] = true
				var live []verdict.Finding
				if f != nil {
					live = f.Findings
				}
				runs = append(runs, checked{seed, col, live})
			}
		}
	}
	limit := c.checks
	if limit <= 0 {
		limit = DefaultMaxChecks
	}
	// What a live run showed is reported there: the battery adds the rest.
	var known verdict.Set
	for _, f := range failures {
		known.Add(f.Findings...)
	}
	for i, run := range runs {
		if i == limit {
			t.Logf("harness: %d distinct fault-free runs, %d checked (harness.MaxChecks)", len(runs), limit)
			break
		}
		fs, err := battery(ranks, fn, &c, run, &known)
		if err != nil {
			t.Fatalf("harness: checking seed %d: %v", run.seed, err)
			return nil
		}
		failures = append(failures, fs...)
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
			if !seen[string(k)] {
				missing = append(missing, string(k))
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

func runOnce(ranks int, fn func(*gpu.Rank) error, c *config, specs []faults.Spec, plan []string, seed uint64, col *replay.Collector) *Failure {
	plan0 := faults.NewPlan(specs, seed)
	var sink gpu.EventSink = hashOnly{}
	if col != nil {
		sink = col
	}
	err := launch(ranks, fn, c, plan0, seed, sink)
	if err == nil {
		return nil
	}
	f := &Failure{Seed: seed, Plan: plan, Kinds: kindsOf(err), Findings: findingsOf(err), Err: err}
	// Shrinking replays subsets of the injections: it needs all of them (a
	// plan keeps at most faults.MaxKept).
	if inj := plan0.Injections(); len(inj) > 0 && plan0.Complete() {
		f.Minimal = shrink(ranks, fn, c, specs, seed, inj, f.Kinds)
	} else if !plan0.Complete() {
		f.Unshrunk = plan0.Count()
	}
	return f
}

func launch(ranks int, fn func(*gpu.Rank) error, c *config, inj faults.Injector, seed uint64, sink gpu.EventSink, extra ...gpu.Option) error {
	opts := append(slices.Clone(c.launch), gpu.Seed(seed), gpu.Faults(inj), gpu.WallTimeout(c.timeout), gpu.RunTimeout(c.timeout))
	opts = append(opts, extra...)
	if sink != nil {
		opts = append(opts, gpu.RecordTo(sink))
	}
	return gpu.Launch(ranks, fn, opts...)
}

// findingsOf is a live run's findings: the RunError's, or no-progress for
// a rank that stopped calling the runtime.
func findingsOf(err error) []verdict.Finding {
	if err == nil {
		return nil
	}
	var re *gpu.RunError
	if errors.As(err, &re) {
		return re.Findings
	}
	if errors.Is(err, gpu.ErrWatchdog) {
		return []verdict.Finding{verdict.New(verdict.NoProgress, nil, err.Error())}
	}
	return []verdict.Finding{verdict.New(verdict.RankError, nil, err.Error())}
}

func kindsOf(err error) []string {
	var kinds []string
	for _, f := range findingsOf(err) {
		kinds = append(kinds, string(f.Kind))
	}
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

// checked is a fault-free run kept for the check battery.
type checked struct {
	seed uint64
	col  *replay.Collector
	live []verdict.Finding // the run's own findings
}

// battery runs check's battery (as recorded, sync, mutate, delay seeds,
// every AnySource alternative: replay.Check) on a fault-free run's events
// and returns a Failure for each finding not yet known (live runs' and
// earlier batteries'), adding it to known.
func battery(ranks int, fn func(*gpu.Rank) error, c *config, run checked, known *verdict.Set) ([]Failure, error) {
	events := run.col.Events(ranks).Compact() // converted once for the battery's replays
	open := func() (replay.Source, error) { return events.Source(), nil }
	rerun := func(m replay.ForcedMatch) (replay.RerunOutcome, error) { return rerunForced(ranks, fn, c, run, m), nil }
	res, err := replay.Check(open, run.col.Config(), run.col.Site, replay.CheckOptions{Rerun: rerun})
	if err != nil {
		return nil, err
	}
	var out []Failure
	for _, f := range res.Findings {
		if known.Add(f) == 0 {
			continue
		}
		rep := verdict.Report{Findings: []verdict.Finding{f}}
		fl := Failure{Seed: run.seed, Kinds: []string{string(f.Kind)}, Findings: []verdict.Finding{f}, Replay: f.RevealedBy,
			Err: errors.New(strings.TrimSuffix(strings.TrimPrefix(rep.Text(), "1 finding(s)\n\n"), "\n"))}
		if f.Seed != nil {
			fl.ReplaySeed = *f.Seed
		}
		out = append(out, fl)
	}
	return out, nil
}

// rerunForced re-runs fn as the checked run ran, with one AnySource
// receive forced to the alternative sender: a race is a bug when the
// program fails that way (its own error, a crash, a hang, any finding the
// checked run did not have), unless the forced match did not happen and
// the run only hung (replay.RerunProvesNothing).
func rerunForced(ranks int, fn func(*gpu.Rank) error, c *config, run checked, m replay.ForcedMatch) replay.RerunOutcome {
	col := replay.NewCollector()
	err := launch(ranks, fn, c, nil, run.seed, col, gpu.ForceMatch(m.Rank, m.Seq, m.Src))
	if errors.Is(err, gpu.ErrWatchdog) {
		return replay.RerunOutcome{Failed: true, Evidence: err.Error()}
	}
	src, _, ok := col.Matched(m.Rank, m.Seq)
	var re *gpu.RunError
	if replay.RerunProvesNothing(ok && src == m.Src, err != nil && !errors.As(err, &re), findingsOf(err)) {
		return replay.RerunOutcome{Illegal: true}
	}
	var old verdict.Set
	old.Add(run.live...)
	var out replay.RerunOutcome
	for _, f := range findingsOf(err) {
		if old.Add(f) > 0 {
			out.Findings = append(out.Findings, f)
		}
	}
	if len(out.Findings) > 0 {
		out.Failed = true
		var parts []string
		for _, f := range out.Findings {
			p := string(f.Kind) + ": " + strings.SplitN(f.Message, "\n", 2)[0]
			if len(f.Ops) > 0 && f.Ops[0].Site != "" {
				p += " at " + f.Ops[0].Site
			}
			parts = append(parts, p)
		}
		out.Evidence = strings.Join(parts, "; ")
	}
	return out
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
	fmt.Fprintf(&b, "reproduce:\n  go test -run '%s'%s -p2ptrace.seed=%d", run, testPackage(), f.Seed)
	if len(f.Plan) > 0 {
		fmt.Fprintf(&b, " -p2ptrace.fault='%s'", strings.Join(f.Plan, ";"))
	}
	b.WriteString("\n")
	if path != "" && f.Replay != "" {
		// Found by the check battery on the fault-free run: check replays it.
		fmt.Fprintf(&b, "  p2ptrace check %s\n", path)
	} else if path != "" {
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

// testPackage is " " and the import path of the package under test (its
// test binary is PATH.test), so the go test line runs from anywhere in the
// module; "" when the binary has no build info.
func testPackage() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || !strings.HasSuffix(bi.Path, ".test") {
		return ""
	}
	return " " + strings.TrimSuffix(bi.Path, ".test")
}
