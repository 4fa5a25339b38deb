package replay

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Opener opens a fresh Source over the same trace for each run.
type Opener func() (Source, error)

// Run replays the trace once under specs and seed and explains the outcome.
func Run(open Opener, base Config, site sim.SiteFunc, specs []faults.Spec, seed uint64) ([]Finding, error) {
	fs, _, err := run(open, base, site, specs, seed, nil)
	return fs, err
}

// run is Run that also returns the outcome. The findings' RevealedBy names
// the fault specs and the forced match, if any, as the command line does.
// trim, if set, leaves out of the outcome what the caller will not report,
// before the findings are made of it (a replay may find thousands of races
// that a check drops).
func run(open Opener, base Config, site sim.SiteFunc, specs []faults.Spec, seed uint64, trim func(*Outcome)) ([]Finding, *Outcome, error) {
	src, err := open()
	if err != nil {
		return nil, nil, err
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
		return nil, nil, err
	}
	if trim != nil {
		trim(out)
	}
	if err := lookupRecorded(open, out.Races); err != nil {
		return nil, nil, err
	}
	if err := lookupCorrupted(open, out.Corrupted); err != nil {
		return nil, nil, err
	}
	var parts []string
	if plan != nil {
		parts = append(parts, faults.Describe(specs))
	}
	if cfg.Force != nil {
		parts = append(parts, "--force-match "+cfg.Force.String())
	}
	if cfg.Hold != nil {
		parts = append(parts, "--hold-post "+cfg.Hold.String())
	}
	desc := strings.Join(parts, " ")
	sync, drops := false, ""
	if plan != nil {
		sync = plan.Sync()
		if out.Stuck {
			drops = describeDrops(plan)
		}
	}
	fs := Explain(out, site, desc, sync, drops)
	for i := range fs {
		s := seed
		fs[i].Seed = &s
	}
	return fs, out, nil
}

// MaxListedDrops is how many dropped messages a finding names; it counts the rest.
const MaxListedDrops = 8

// describeDrops names the messages the plan dropped ("" for none): the
// first MaxListedDrops, then how many more (a plan keeps only the first
// faults.MaxKept injections, but counts them all).
func describeDrops(plan *faults.Plan) string {
	var parts []string
	for _, in := range plan.Injections() {
		if in.Drop && len(parts) < MaxListedDrops {
			parts = append(parts, in.String())
		}
	}
	if n := plan.Drops() - len(parts); n > 0 {
		parts = append(parts, fmt.Sprintf("and %d more dropped messages", n))
	}
	return strings.Join(parts, "; ")
}

// lookupRecorded fills in each race's Recorded: the post event of the send
// the receive matched when recorded. It reads a fresh source up to the
// highest sequence number it needs of each rank involved.
func lookupRecorded(open Opener, races []Race) error {
	if len(races) == 0 {
		return nil
	}
	upTo := map[int]uint64{}
	for _, r := range races {
		if !r.unnamed() {
			upTo[r.RecordedRank] = max(upTo[r.RecordedRank], r.RecordedSeq)
		}
	}
	src, err := open()
	if err != nil {
		return err
	}
	found := map[opKey]*trace.Event{}
	for _, rk := range slices.Sorted(maps.Keys(upTo)) {
		if rk < 0 || rk >= src.Ranks() {
			continue
		}
		var ev trace.Event
		for src.Next(rk, &ev) {
			if ev.Kind != trace.KindPost {
				continue
			}
			if ev.Seq > upTo[rk] {
				break
			}
			e := ev
			e.Reqs = nil
			found[opKey{rk, ev.Seq}] = &e
		}
	}
	if err := src.Err(); err != nil {
		return fmt.Errorf("looking up the recorded sends of message races: %w", err)
	}
	for i := range races {
		if !races[i].unnamed() {
			races[i].Recorded = found[opKey{races[i].RecordedRank, races[i].RecordedSeq}]
		}
	}
	return nil
}

// Explore replays the trace under specs for seeds 0..n-1 (starting at
// first) and returns the findings deduplicated by signature, each with the
// first seed that showed it. The replays run one after another: open need
// serve one goroutine only (Trace.Explore runs them on every core).
func Explore(open Opener, base Config, site sim.SiteFunc, specs []faults.Spec, first uint64, n int, progress func(done int)) ([]Finding, error) {
	return explore(open, base, site, specs, first, n, progress, CheckOptions{Workers: 1})
}

// Explore is Explore over the trace's file, base its Config with what the
// caller changed, its replays on workers workers (0: GOMAXPROCS), each
// reading the file through a reader of its own: the findings are those of
// one worker, in the same order, with the same first seeds.
func (t *Trace) Explore(base Config, specs []faults.Spec, first uint64, n, workers int, progress func(done int)) ([]Finding, error) {
	return explore(t.OpenDirect, base, t.Site, specs, first, n, progress, CheckOptions{Workers: workers, WorkerOpener: t.reopen})
}

func explore(open Opener, base Config, site sim.SiteFunc, specs []faults.Spec, first uint64, n int, progress func(done int), opts CheckOptions) ([]Finding, error) {
	jobs := make([]replayJob, n)
	for i := range jobs {
		jobs[i] = replayJob{specs: specs, seed: first + uint64(i), keepAll: true}
	}
	if progress != nil {
		opts.Progress = func(done, _ int) { progress(done) }
	}
	results, err := runJobs(open, base, site, jobs, enumerated{}, opts)
	if err != nil {
		return nil, err
	}
	var all verdict.Set // deduplicated as found: a signature is made once per finding
	for _, r := range results {
		all.Add(r.findings...)
	}
	return all.Findings(), nil
}

// DelaySeeds is how many seeds Check runs the delay fault under.
const DelaySeeds = 8

// MaxForcedReplays caps the forced replays of one Check: at most this many
// alternative matches of AnySource receives are replayed (one replay each).
// The alternatives are taken first one per distinct (receive call site,
// sender), then the rest in trace order, so that a loop of many receives at
// one call site does not use up the cap; Enumeration.CutShort says when
// alternatives were left untried.
const MaxForcedReplays = 256

// CheckOptions tunes Check. The zero value is the standard battery.
type CheckOptions struct {
	// MaxForced caps the forced replays (0 means MaxForcedReplays).
	MaxForced int
	// Progress, if set, is called after each replay with the replays done
	// and the total: one call at a time, done increasing, from the worker
	// that finished the replay.
	Progress func(done, total int)
	// Workers is how many replays run at once (0: GOMAXPROCS; 1: one after
	// another). The result does not depend on it: each replay is
	// deterministic, and the results are taken in the battery's order.
	Workers int
	// WorkerOpener, if set, opens the trace once more for one more worker
	// and returns the Opener with what releases it: Check's own Opener then
	// serves one worker alone, as a trace file's reader must (it is used
	// from one goroutine at a time). Without it, the workers share Check's
	// Opener, which must then be safe for concurrent use (Events' is).
	WorkerOpener func() (Opener, func() error, error)
	// Rerun, if set, re-executes the real program with one AnySource match
	// forced (see Rerunner): a race whose model replay is clean is judged by
	// it. Without it such a race is unconfirmed (NoRerun says why).
	Rerun Rerunner
	// NoRerun says why races cannot be re-run when Rerun is nil ("" : the
	// trace has no way to re-run its program).
	NoRerun string
	// MaxReruns caps the re-runs (0 means MaxReruns).
	MaxReruns int
	// Strict makes an unconfirmed race a finding.
	Strict bool
	// PollLimit overrides the trace's poll limit in CheckTrace (0: the
	// default, sim.DefaultPollLimit).
	PollLimit int
}

// MaxReruns is how many re-executions of the real program one check runs at
// most: one per distinct (receive call site, alternative sender's call
// site) whose model replay was clean.
const MaxReruns = 16

// Rerunner re-executes the recorded program with the receive m names
// forced to match m.Src, and says how that run ended.
type Rerunner func(m ForcedMatch) (RerunOutcome, error)

// RerunOutcome is how a re-execution with a forced match ended.
type RerunOutcome struct {
	// Illegal: the forced receive never matched the forced sender in the
	// real run, which failed in no other way than hanging: no evidence
	// either way (RerunProvesNothing).
	Illegal bool
	// Unjudged, if set, says why the program could not be re-run at all
	// (it changed since it was recorded...): the race stays unconfirmed.
	Unjudged string
	// Failed: the program failed: a non-zero exit, an abort or MPI error,
	// a hang, or findings the recorded run did not have.
	Failed bool
	// Evidence says how it failed: the exit status, the first error line,
	// the new findings' kinds and lines.
	Evidence string
	// Findings are those of the re-run the recording did not have.
	Findings []Finding
}

// RerunProvesNothing reports whether a re-run with a forced match is no
// evidence either way: the forced receive did not match the forced sender,
// and the run failed in no way (exited cleanly: !exitedBadly) but, at most,
// by hanging. A pinned receive waits for its sender's message alone, which
// another receive may have taken first in a real run (an earlier receive
// from MPI_ANY_SOURCE, the messages come in the other order): the pin, not
// the program, hung that run. Every door that re-runs judges by this rule.
func RerunProvesNothing(matched, exitedBadly bool, found []verdict.Finding) bool {
	return !matched && !exitedBadly && !slices.ContainsFunc(found, func(f verdict.Finding) bool { return !f.Kind.Stuck() })
}

// CheckResult is what Check found.
type CheckResult struct {
	Findings  []Finding
	AnySource Enumeration
	// Notes are what check found and is no finding: nondeterministic
	// receives whose alternatives all ran clean, races left unconfirmed.
	Notes []string
}

// Check runs the standard battery: as recorded, sync, mutate, delay over
// several seeds, every alternative match of each AnySource receive (one
// receive forced to one other sender per replay; see MaxForcedReplays), and
// each ready send with its receive held back (see HeldPost). When
// the cap cut the alternatives short, it also runs each rank's messages late
// in turn (at most 64 ranks). It returns the findings deduplicated.
// The replays run at once on opts.Workers workers; each is judged as it
// ends, and the results are taken in the battery's order, so the result is
// the same on any number of workers.
func Check(open Opener, base Config, site sim.SiteFunc, opts CheckOptions) (*CheckResult, error) {
	limit := opts.MaxForced
	if limit <= 0 {
		limit = MaxForcedReplays
	}
	var ready readyScan
	alts, en, err := alternatives(open, limit, &ready)
	if err != nil {
		return nil, err
	}
	src, err := open()
	if err != nil {
		return nil, err
	}
	ranks := src.Ranks()
	type step struct {
		spec  string
		seeds int
	}
	steps := []step{{"", 1}, {"sync", 1}, {"mutate", 1}, {"delay", DelaySeeds}}
	if en.CutShort {
		// Past the cap, each rank's messages arriving late in turn still lets
		// the untried receives see other candidates, if not all of them.
		// (Within the cap the forced matches cover what these runs find: on
		// every scenario of testdata/train, these found nothing more.)
		for r := range min(ranks, 64) {
			steps = append(steps, step{fmt.Sprintf("delay:src=%d,d=1ms", r), 1})
		}
	}
	// The battery: each step's seeds, then each forced match, in this
	// order (and the held replays after the first: see below).
	var jobs []replayJob
	for _, st := range steps {
		var specs []faults.Spec
		if st.spec != "" {
			s, err := faults.Parse(st.spec)
			if err != nil {
				return nil, err
			}
			specs = []faults.Spec{s}
		}
		for seed := range st.seeds {
			jobs = append(jobs, replayJob{specs: specs, seed: uint64(seed)})
		}
	}
	for i := range alts {
		jobs = append(jobs, replayJob{force: &alts[i]})
	}
	// The held replays come right after the one as recorded: a ready send
	// that another replay's timing shows too is reported as the hold shows
	// it, with what orders it (or does not).
	held, heldNote := heldJobs(&ready, MaxHeldReplays)
	jobs = slices.Insert(jobs, 1, held...)
	covered := make(map[ForcedMatch]bool, len(alts))
	for _, a := range alts {
		covered[a] = true
	}
	results, err := runJobs(open, base, site, jobs, enumerated{cutShort: en.CutShort, alts: covered}, opts)
	if err != nil {
		return nil, err
	}
	var all verdict.Set
	var clean []cleanRace // forced matches whose model replay is clean
	for i, res := range results {
		all.Add(res.findings...)
		if jobs[i].force == nil {
			continue
		}
		en.Replayed++
		if !res.forcedMatched {
			en.Illegal++
		}
		clean = append(clean, res.clean...)
	}
	notes, err := judgeRaces(clean, opts, &all)
	if err != nil {
		return nil, err
	}
	if heldNote != "" {
		notes = append(notes, heldNote)
	}
	return &CheckResult{Findings: withoutStuckAsRecorded(all.Findings()), AnySource: en, Notes: notes}, nil
}

// withoutStuckAsRecorded leaves out what the battery found again of a run
// that is stuck as recorded: a stuck finding of the sync replay whose
// blocked calls include every blocked call of one as recorded (the same
// ranks stuck at the same calls, and senders that only buffering let go:
// a send to a receive of another tag or rank), and the unsafe-buffering
// findings (of sync) whose call is stuck as recorded or in such a finding
// (a large head-to-head exchange: buffering did not let the sends complete).
// The one bug is then the finding as recorded, found once.
func withoutStuckAsRecorded(fs []Finding) []Finding {
	var recorded []*Finding
	for i := range fs {
		if f := &fs[i]; f.RevealedBy == "" && f.Kind.Stuck() {
			recorded = append(recorded, f)
		}
	}
	if len(recorded) == 0 {
		return fs
	}
	// One call: the same op of a rank, or of a rank at one line (a loop's
	// later round).
	same := func(a, b OpRef) bool {
		return a.Rank == b.Rank && a.Op == b.Op && (a.Seq == b.Seq || a.Site != "" && a.Site == b.Site)
	}
	in := func(g *Finding, o OpRef) bool {
		for _, b := range g.Blocked {
			if same(b.Call, o) || slices.ContainsFunc(b.Waiting, func(w OpRef) bool { return same(w, o) }) {
				return true
			}
		}
		return false
	}
	restuck := func(f *Finding) bool { // f, of sync, is stuck as one recorded finding and more
		if f.RevealedBy != "sync" || !f.Kind.Stuck() {
			return false
		}
		for _, g := range recorded {
			if len(g.Blocked) > 0 && !slices.ContainsFunc(g.Blocked, func(b verdict.Blocked) bool { return !in(f, b.Call) }) {
				return true
			}
		}
		return false
	}
	stuck := slices.Clone(recorded)
	again := make([]bool, len(fs))
	for i := range fs {
		if again[i] = restuck(&fs[i]); again[i] {
			stuck = append(stuck, &fs[i])
		}
	}
	kept := make([]Finding, 0, len(fs)) // (a new slice: stuck points into fs)
	for i := range fs {
		f := &fs[i]
		unsafe := f.Kind == verdict.UnsafeBuffering && f.RevealedBy == "sync" && len(f.Ops) > 0 &&
			slices.ContainsFunc(stuck, func(g *Finding) bool { return in(g, f.Ops[0]) })
		if !again[i] && !unsafe {
			kept = append(kept, *f)
		}
	}
	return kept
}

// replayJob is one replay of the battery: under specs and seed, or with
// one AnySource match forced.
type replayJob struct {
	specs []faults.Spec
	seed  uint64
	force *ForcedMatch
	// ready: the replay holds back the receive of this ready send (see
	// HeldPost), and keeps only what the hold shows (judgeHeld).
	ready *readySend
	// keepAll keeps every finding of the replay (Explore): none is
	// judged by another replay of the battery.
	keepAll bool
}

// jobResult is what Check keeps of a replay (see judge): its findings to
// report, deduplicated, and for a forced one whether the receive matched
// the forced sender, and the race to judge if the model replay was clean.
// A replay may find thousands of races (every receive after a forced one
// can match otherwise): they are judged as the replay ends, not kept.
type jobResult struct {
	findings      []Finding
	forcedMatched bool
	clean         []cleanRace
	err           error
}

// enumerated is what the battery's forced replays cover: the alternatives
// replayed (alts), and whether the cap cut their enumeration short.
type enumerated struct {
	cutShort bool
	alts     map[ForcedMatch]bool
}

// covers reports whether some race of races took an alternative that a
// forced replay of the battery replays: that replay, and the re-run that
// judges it, say what the program does after that match.
func (en enumerated) covers(races []Race) bool {
	for _, r := range races {
		a := ForcedMatch{Rank: int(r.Recv.Rank), Seq: r.Recv.Seq, Src: r.ReplayRank}
		if en.alts[a] {
			return true
		}
	}
	return false
}

// trim leaves out of the outcome of job's replay what judge drops, so
// that no finding is made of it. en says which alternatives the forced
// replays cover.
func (j replayJob) trim(out *Outcome, en enumerated) {
	if j.keepAll {
		return
	}
	if j.ready != nil {
		// judgeHeld keeps ready sends alone. A held run in which an
		// AnySource receive took another sender than recorded went on
		// with calls the program may not have made after that match, as
		// below: the forced replays judge that race, and this run nothing.
		if len(out.Races) > 0 {
			out.Problems = nil
		}
		out.Races, out.Corrupted = nil, nil
		return
	}
	// Every finding but a race comes of a problem or a corruption.
	others := len(out.Problems) > 0 || len(out.Corrupted) > 0
	if a := j.force; a != nil {
		if out.Forced != nil && isProbe(out.Forced.Kind) {
			// The model cannot judge a probe's other order (see probe.go):
			// only whether it happens, and the probe's race.
			out.Problems, out.Corrupted, others = nil, nil, false
		}
		if !others && forcedMatched(out.Forced) {
			// Only the forced receive's race is judged.
			out.Races = slices.DeleteFunc(out.Races, func(r Race) bool { return int(r.Recv.Rank) != a.Rank || r.Recv.Seq != a.Seq })
		}
		return
	}
	// A run in which an AnySource receive took another sender than
	// recorded went on with the recorded calls, which the program may not
	// have made after that match (a reply sent to the status's source):
	// what it shows then is judged by the forced match of that receive
	// (every one is enumerated), not here. Past the enumeration's cap, a
	// race with something else wrong is kept when no forced replay took
	// any of its receives' matches: nothing else would show it.
	if len(out.Races) > 0 && (!en.cutShort || !others || en.covers(out.Races)) {
		out.Races, out.Problems, out.Corrupted = nil, nil, nil
	}
}

// judge reduces the findings fs of job's trimmed replay to its result.
func (j replayJob) judge(fs []Finding, out *Outcome) jobResult {
	a := j.force
	if a == nil {
		return jobResult{findings: verdict.Dedup(fs)}
	}
	if !forcedMatched(out.Forced) {
		// The receive never matched the forced sender: either another
		// candidate was there and the choice is no legal execution, or
		// none was and the run is the unforced one.
		return jobResult{}
	}
	res := jobResult{forcedMatched: true}
	if slices.ContainsFunc(fs, notRace) {
		res.findings = verdict.Dedup(fs) // the other order hangs or errs in the model
		return res
	}
	// The race to judge is the forced receive's; the others of this
	// run follow from it (the same re-run judges them).
	for _, f := range fs {
		if len(f.Ops) > 0 && f.Ops[0].Rank == a.Rank && f.Ops[0].Seq == a.Seq {
			res.clean = append(res.clean, cleanRace{*a, f})
		}
	}
	return res
}

// runJobs replays the jobs on opts.Workers workers and returns their
// results (judged as each replay ends) in the jobs' order. On errors it returns the first job's in that
// order, as a run one after another would (the workers stop taking jobs).
func runJobs(open Opener, base Config, site sim.SiteFunc, jobs []replayJob, en enumerated, opts CheckOptions) ([]jobResult, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(jobs)))
	results := make([]jobResult, len(jobs))
	var (
		next   atomic.Int64 // the next job to take
		failed atomic.Bool
		mu     sync.Mutex // serializes Progress
		done   int
	)
	work := func(open Opener) {
		for !failed.Load() {
			i := int(next.Add(1) - 1)
			if i >= len(jobs) {
				return
			}
			j, res := jobs[i], &results[i]
			cfg := base
			if j.force != nil {
				cfg.Force = j.force
			}
			if j.ready != nil {
				cfg.Hold = &j.ready.recv
			}
			fs, out, err := run(open, cfg, site, j.specs, j.seed, func(out *Outcome) { j.trim(out, en) })
			if err != nil {
				res.err = err
				failed.Store(true)
				return
			}
			if j.ready != nil {
				*res = jobResult{findings: judgeHeld(j.ready, fs, cfg.Names, site)}
			} else {
				*res = j.judge(fs, out)
			}
			if opts.Progress != nil {
				mu.Lock()
				done++
				opts.Progress(done, len(jobs))
				mu.Unlock()
			}
		}
	}
	// Each worker after the first gets its own Opener, when sources must
	// not be shared.
	opens := make([]Opener, workers)
	opens[0] = open
	var releases []func() error
	var err error
	for w := 1; w < workers && err == nil; w++ {
		opens[w] = open
		if opts.WorkerOpener != nil {
			var release func() error
			if opens[w], release, err = opts.WorkerOpener(); err == nil {
				releases = append(releases, release)
			}
		}
	}
	if err == nil {
		var wg sync.WaitGroup
		for _, o := range opens[1:] {
			wg.Go(func() { work(o) })
		}
		work(open)
		wg.Wait()
	} else {
		err = fmt.Errorf("opening the trace for another worker: %w", err)
	}
	for _, release := range releases {
		err = errors.Join(err, release())
	}
	for i := range results {
		if e := results[i].err; e != nil {
			return nil, e
		}
	}
	if err != nil {
		return nil, err
	}
	return results, nil
}

func notRace(f Finding) bool { return f.Kind != verdict.MessageRace }

// cleanRace is a forced match whose model replay showed the race alone.
type cleanRace struct {
	match ForcedMatch
	race  Finding
}

// judgeRaces settles the races whose model replay was clean by re-running
// the program (opts.Rerun), capped at opts.MaxReruns (rerunOrder says which
// run): a failed re-run is a message-race finding with its evidence, added
// to all; receives whose re-runs were all clean, and races left unjudged,
// are notes.
func judgeRaces(races []cleanRace, opts CheckOptions, all *verdict.Set) ([]string, error) {
	limit := opts.MaxReruns
	if limit <= 0 {
		limit = MaxReruns
	}
	type perRecv struct {
		at                  string
		clean, left, failed int
		model               string // what the model made of the other orders
	}
	var order []string
	recvs := map[string]*perRecv{}
	reruns := 0
	unjudged := "" // why the program could not be re-run, when it could not
	picked, first := rerunOrder(races, limit)
	for n, c := range picked {
		recv := fmt.Sprintf("rank %d's %s%s", c.race.Ops[0].Rank, c.race.Ops[0].Op, atSite(c.race.Ops[0].Site))
		pr := recvs[recv]
		if pr == nil {
			pr = &perRecv{at: recv, model: "the model replays those orders cleanly"}
			if probed(c.race) {
				pr.model = probeUnjudged
			}
			recvs[recv] = pr
			order = append(order, recv)
		}
		if opts.Rerun == nil || reruns >= limit {
			pr.left++
			if opts.Strict {
				f := c.race
				why := "the model replay of this order is clean"
				if probed(c.race) {
					why = probeUnjudged
				}
				f.Message += "\nunconfirmed: " + why + ", and the program could not be re-run to judge it"
				all.Add(f)
			}
			continue
		}
		reruns++
		o, err := opts.Rerun(c.match)
		if err != nil {
			return nil, fmt.Errorf("re-running the program with --force-match %s: %w", c.match, err)
		}
		switch {
		case o.Unjudged != "":
			pr.left++
			unjudged = o.Unjudged
		case o.Illegal && n >= first:
			// A further sender's re-run that proved nothing: the pair's
			// first re-run judged it.
		case o.Illegal:
			pr.left++
		case o.Failed:
			pr.failed++
			f := c.race
			f.RevealedBy = "--force-match " + c.match.String() + " (re-run)"
			f.Message += "\nre-run with this match forced, the program failed: " + o.Evidence
			all.Add(f)
			for _, g := range o.Findings { // what the program did in that order
				g.RevealedBy, g.Seed = f.RevealedBy, nil
				all.Add(g)
			}
		default:
			pr.clean++
		}
	}
	var notes []string
	for _, recv := range order {
		pr := recvs[recv]
		switch {
		case pr.failed > 0:
			// A re-run failed: the receive's race is a finding, and what
			// its other alternatives did adds nothing to it.
		case pr.clean > 0 && pr.left == 0:
			notes = append(notes, fmt.Sprintf("%s is nondeterministic: %d alternative(s) re-run, all clean", pr.at, pr.clean))
		case pr.left > 0:
			why := opts.NoRerun
			switch {
			case unjudged != "":
				why = unjudged
			case opts.Rerun != nil:
				why = fmt.Sprintf("past the cap of %d re-runs (--max-reruns), or the forced match did not happen in the real run", limit)
			}
			if why == "" {
				why = "the trace does not say how to re-run its program"
			}
			notes = append(notes, fmt.Sprintf("unconfirmed race: %s can match %d other sender(s) and %s; only a re-run of the program can judge what it does with the data, and none ran (%s)", pr.at, pr.left, pr.model, why))
		}
	}
	return notes, nil
}

// rerunOrder picks the races to re-run, in the order to run them, and
// says how many of them are of the first round. A race names a wildcard
// receive and a sender it could have taken instead; a (receive site,
// sender site) pair stands for the races of those sites, and each pair is
// re-run once, first. Then, while fewer than limit are picked, each further
// sender rank of a pair: two senders of one site run the same code but send
// different data (a rank's own number, its part of the work), and a program
// that sorts what its wildcard receives get by sender can fail with one
// sender's message first and not with another's. A further sender's message
// that an earlier receive of the rank took in the recorded run is left out:
// the re-run pins one receive, the earlier one takes that message again,
// and the pinned one waits for ever (no evidence).
func rerunOrder(races []cleanRace, limit int) ([]cleanRace, int) {
	type key struct {
		recv, alt string
		rank      int // the sender's rank, in the second round; -1 in the first
	}
	keyOf := func(c cleanRace, byRank bool) key {
		k := key{recv: c.race.Ops[0].Site, rank: -1}
		if n := len(c.race.Ops); n > 1 {
			k.alt = c.race.Ops[n-1].Site
			if byRank {
				k.rank = c.race.Ops[n-1].Rank
			}
		}
		return k
	}
	seen := map[key]bool{}
	type opKey struct {
		rank int
		seq  uint64
	}
	takenBy := map[opKey]opKey{} // a send -> the receive that took it when recorded
	for _, c := range races {
		if ops := c.race.Ops; len(ops) == 3 {
			takenBy[opKey{ops[1].Rank, ops[1].Seq}] = opKey{ops[0].Rank, ops[0].Seq}
		}
	}
	takenEarlier := func(c cleanRace) bool {
		ops := c.race.Ops
		if len(ops) != 3 {
			return false
		}
		r, ok := takenBy[opKey{ops[2].Rank, ops[2].Seq}]
		return ok && r.rank == ops[0].Rank && r.seq < ops[0].Seq
	}
	var picked, rest []cleanRace
	for _, c := range races {
		if k := keyOf(c, false); !seen[k] {
			seen[k] = true
			picked = append(picked, c)
			seen[keyOf(c, true)] = true
		} else {
			rest = append(rest, c)
		}
	}
	first := len(picked)
	for _, c := range rest {
		if len(picked) >= limit {
			break
		}
		if k := keyOf(c, true); k.rank >= 0 && !seen[k] && !takenEarlier(c) {
			seen[k] = true
			picked = append(picked, c)
		}
	}
	return picked, first
}

// CheckTrace is check's whole verdict on a trace file: the findings the
// recording itself made (a crash, an in-flight mutation, the live run's
// hang) first, then the battery's (Check), deduplicated by signature, less
// those that restate a recorded one (Finding.Restates); and,
// for a trace cut short, where each unfinished rank's record ends.
func CheckTrace(t *Trace, opts CheckOptions) (*Report, error) {
	cfg := t.Config()
	cfg.PollLimit = opts.PollLimit
	if opts.WorkerOpener == nil {
		opts.WorkerOpener = t.reopen
	}
	// Each worker decodes its own replay's events: the workers keep the
	// cores busy, and decoders ahead of each (Open) only compete with them.
	res, err := Check(t.OpenDirect, cfg, t.Site, opts)
	if err != nil {
		return nil, err
	}
	var set verdict.Set
	var recorded []Finding
	for _, f := range t.Recorded() {
		if t.Rules() == RulesNCCL && rederived(f.Kind) {
			// The recording's protocol findings are its backend's (gloo);
			// the battery says what NCCL's rules make of the same calls.
			continue
		}
		set.Add(f)
		recorded = append(recorded, f)
	}
	for _, f := range res.Findings {
		if !slices.ContainsFunc(recorded, func(rec Finding) bool { return f.Restates(&rec) }) {
			set.Add(f)
		}
	}
	ends, err := t.Ends()
	if err != nil {
		return nil, err
	}
	// A trace recorded before the merge folded effects into their causes
	// gets the same one finding per bug.
	fs := verdict.FoldEffects(set.Findings())
	h := t.Header()
	return &Report{Findings: fs, Ends: ends, AnySource: &res.AnySource, Notes: res.Notes, Comms: h.NamedComms(fs)}, nil
}

// reopen gives another worker of Check a reader of the trace, under the
// same rules (a reader serves one goroutine at a time).
func (t *Trace) reopen() (Opener, func() error, error) {
	// A Fork, not a second Open: the workers share one mapping of the
	// file (a second Open maps it again: one file size of memory per
	// worker) and read the very header and blocks t does.
	f, err := t.r.Fork()
	if err != nil {
		return nil, nil, err
	}
	u := &Trace{r: f, rules: t.rules}
	return u.OpenDirect, u.Close, nil
}

// rederived reports whether a replay finds findings of kind k from the
// trace's calls alone (so a replay under other rules says it in its own
// terms), unlike what only the recording could see: a crash, a rank's own
// error, the data's hashes, the shim's buffer ranges.
func rederived(k verdict.Kind) bool {
	switch k {
	case verdict.Deadlock, verdict.Hang, verdict.MissingWait, verdict.UnmatchedSend, verdict.Truncation,
		verdict.TypeMismatch, verdict.CountMismatch, verdict.ReadyWithoutRecv:
		return true
	}
	return false
}

// ForcedMatch names an AnySource receive, by (Rank, Seq), and the sender
// rank Src it is restricted to: the engine's envelope rule then lets only
// Src's sends match it. Reports still show the receive as AnySource.
type ForcedMatch struct {
	Rank int
	Seq  uint64
	Src  int
}

// String is "RANK:SEQ=SRC", the form ParseForcedMatch reads (and
// p2ptrace replay --force-match takes).
func (f ForcedMatch) String() string { return fmt.Sprintf("%d:%d=%d", f.Rank, f.Seq, f.Src) }

// ParseForcedMatch reads "RANK:SEQ=SRC": rank RANK's receive number SEQ
// (its op sequence number in the trace) matched from rank SRC.
func ParseForcedMatch(s string) (ForcedMatch, error) {
	bad := fmt.Errorf("forced match %q: want RANK:SEQ=SRC, e.g. 0:3=2 (rank 0's AnySource receive op 3 matched from rank 2)", s)
	r, rest, ok1 := strings.Cut(s, ":")
	seq, src, ok2 := strings.Cut(rest, "=")
	if !ok1 || !ok2 {
		return ForcedMatch{}, bad
	}
	rk, err1 := strconv.ParseUint(r, 10, 31)
	sq, err2 := strconv.ParseUint(seq, 10, 64)
	sr, err3 := strconv.ParseUint(src, 10, 31)
	if err := errors.Join(err1, err2, err3); err != nil {
		return ForcedMatch{}, fmt.Errorf("%w: %w", bad, err)
	}
	return ForcedMatch{Rank: int(rk), Seq: sq, Src: int(sr)}, nil
}

// sendKey is one kind of message of a trace: sender, destination, communicator and tag.
type sendKey struct {
	src, dst, comm, tag int32
}

// alternatives lists, in a deterministic order, up to limit alternative
// matches of the trace's AnySource receives and probes (probe.go): for each
// receive that matched when recorded (probe that found a message), each
// other rank that sent to the receiver on its communicator with a tag it
// accepts. It reads the trace twice, streaming: first the kinds of messages
// sent, then the receives.
//
// Its cost is linear in the events and the kinds of messages, not in
// receives times senders: a rank's receives of one communicator and tag
// share one list of candidate senders (see enumerator), and once the list
// to replay is settled a receive only counts its alternatives.
func alternatives(open Opener, limit int, ready *readyScan) ([]ForcedMatch, Enumeration, error) {
	en := Enumeration{Cap: limit}
	src, err := open()
	if err != nil {
		return nil, en, err
	}
	kinds := map[sendKey]bool{}
	var ev trace.Event
	for r := range src.Ranks() {
		for src.Next(r, &ev) {
			if ev.Kind == trace.KindPost && ev.Op.IsSend() && ev.Op != trace.OpStreamSend {
				kinds[sendKey{int32(r), ev.Peer, ev.Comm, ev.Tag}] = true
			}
			ready.see(r, &ev)
		}
	}
	if err := src.Err(); err != nil {
		return nil, en, fmt.Errorf("enumerating AnySource alternatives: %w", err)
	}
	byDst := map[int32][]sendKey{}
	for k := range kinds {
		byDst[k.dst] = append(byDst[k.dst], k)
	}
	for _, ks := range byDst {
		slices.SortFunc(ks, func(a, b sendKey) int {
			return cmp.Or(cmp.Compare(a.src, b.src), cmp.Compare(a.comm, b.comm), cmp.Compare(a.tag, b.tag))
		})
	}

	type pending struct {
		comm, tag int32
		site      uint32
	}
	n := enumerator{limit: limit, seen: map[siteSender]bool{}}
	recvs := ready.wantsRecvs()
	src, err = open()
	if err != nil {
		return nil, en, err
	}
	for r := range src.Ranks() {
		n.startRank(byDst[int32(r)])
		posted := map[uint64]pending{}
		for src.Next(r, &ev) {
			if recvs {
				ready.seeRecv(r, &ev)
			}
			if ev.Kind == trace.KindPost {
				if ((ev.Op == trace.OpRecv || ev.Op == trace.OpIrecv) && ev.Peer == trace.AnySource) || IsAnySourceProbe(&ev) {
					posted[ev.Seq] = pending{ev.Comm, ev.Tag, ev.Site}
				}
				continue
			}
			p, ok := posted[ev.Seq]
			if !ok {
				continue
			}
			delete(posted, ev.Seq)
			from := recordedSource(&ev)
			if from < 0 {
				continue // never matched when recorded: nothing to compare with
			}
			if isProbe(ev.Op) {
				en.Probes++
			} else {
				en.Receives++
			}
			en.Alternatives += n.receive(ForcedMatch{Rank: r, Seq: ev.Seq}, recvShape{p.comm, p.tag}, p.site, from)
		}
	}
	if err := src.Err(); err != nil {
		return nil, en, fmt.Errorf("enumerating AnySource alternatives: %w", err)
	}
	alts := append(n.first, n.rest...)
	if len(alts) > limit {
		alts = alts[:limit]
	}
	slices.SortFunc(alts, func(a, b ForcedMatch) int {
		return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Src, b.Src))
	})
	en.CutShort = en.Alternatives > len(alts)
	return alts, en, nil
}

// recvShape is what decides which senders an AnySource receive of a rank
// accepts: its communicator and tag.
type recvShape struct{ comm, tag int32 }

type siteSender struct {
	site uint32
	src  int32
}

// siteShape is a receive call site of one rank with one shape.
type siteShape struct {
	site  uint32
	shape recvShape
}

// enumerator picks the alternatives to replay, receive after receive in
// trace order: first one per distinct (receive call site, sender), up to
// limit, then the others in trace order, up to limit; the list replayed is
// the first ones, then as many of the others as the limit leaves room for.
//
// A receive of a rank with s candidate senders would cost s steps, every
// one of them (a gather to rank 0 of n ranks: n receives a round of n-1
// candidates each). Two facts bound it instead: once first and rest
// together hold limit, no other alternative can enter the list but a new
// (site, sender) pair, for first; and a receive marks every candidate but
// its recorded sender as seen at its site, so after one receive of a site
// and shape at most one candidate of them (that receive's recorded sender)
// can still be new there. A receive then costs a lookup or two.
type enumerator struct {
	limit       int
	seen        map[siteSender]bool
	first, rest []ForcedMatch
	// Of the rank being enumerated: its kinds of messages received (by
	// sender, communicator, tag), the candidate senders of each shape of
	// receive (ascending, distinct), and what each site and shape may
	// still have new (see siteLeft).
	to      []sendKey
	byShape map[recvShape][]sendKey // to filed by (comm, tag) and (comm, AnyTag), made on first use
	senders map[recvShape][]int32
	left    map[siteShape]siteLeft
}

// siteLeft is what a site and shape of a rank may still add to first: once
// a receive of them was enumerated whole (visited), only candidate (when it
// is not -1) may be a new (site, sender) pair.
type siteLeft struct {
	visited   bool
	candidate int32
}

// startRank starts the receives of a rank, whose kinds of messages
// received are to.
func (n *enumerator) startRank(to []sendKey) {
	n.to, n.byShape = to, nil
	n.senders = map[recvShape][]int32{}
	n.left = map[siteShape]siteLeft{}
}

// candidates returns the senders a receive of shape sh accepts (by the
// engine's rule, sim.Accepts), ascending and distinct. It looks at the
// kinds of messages filed under sh alone: a receive of a specific tag can
// accept only those of its communicator and tag, one of AnyTag only those
// of its communicator (so that tags that count iterations do not make
// each shape scan the kinds of all the others).
func (n *enumerator) candidates(sh recvShape) []int32 {
	if c, ok := n.senders[sh]; ok {
		return c
	}
	if n.byShape == nil {
		n.byShape = map[recvShape][]sendKey{}
		for _, k := range n.to { // by sender: each list stays so
			n.byShape[recvShape{k.comm, k.tag}] = append(n.byShape[recvShape{k.comm, k.tag}], k)
			n.byShape[recvShape{k.comm, trace.AnyTag}] = append(n.byShape[recvShape{k.comm, trace.AnyTag}], k)
		}
	}
	var c []int32
	for _, k := range n.byShape[sh] {
		if (len(c) == 0 || c[len(c)-1] != k.src) && sim.Accepts(trace.AnySource, sh.tag, sh.comm, k.src, k.tag, k.comm) {
			c = append(c, k.src)
		}
	}
	n.senders[sh] = c
	return c
}

// settled reports whether the list replayed can change only by new
// (site, sender) pairs: first and rest hold limit together.
func (n *enumerator) settled() bool { return len(n.first)+len(n.rest) >= n.limit }

// add takes alternative a of a receive at site, in trace order.
func (n *enumerator) add(a ForcedMatch, site uint32) {
	if ss := (siteSender{site, int32(a.Src)}); !n.seen[ss] {
		n.seen[ss] = true
		if len(n.first) < n.limit {
			n.first = append(n.first, a)
		}
	} else if !n.settled() {
		n.rest = append(n.rest, a)
	}
}

// receive enumerates the receive recv (its Src unset) of shape sh at site,
// which matched sender matched when recorded, and returns its number of
// alternatives.
func (n *enumerator) receive(recv ForcedMatch, sh recvShape, site uint32, matched int32) int {
	c := n.candidates(sh)
	count := len(c)
	if _, in := slices.BinarySearch(c, matched); in {
		count--
	}
	k := siteShape{site, sh}
	left := n.left[k]
	if left.visited && n.settled() {
		if s := left.candidate; s >= 0 && s != matched {
			a := recv
			a.Src = int(s)
			n.add(a, site) // (nothing, if another shape's receive saw it at this site since)
			n.left[k] = siteLeft{visited: true, candidate: -1}
		}
		return count
	}
	for _, s := range c {
		if s == matched {
			continue
		}
		a := recv
		a.Src = int(s)
		n.add(a, site)
	}
	left = siteLeft{visited: true, candidate: -1}
	if _, in := slices.BinarySearch(c, matched); in && !n.seen[siteSender{site, matched}] {
		left.candidate = matched
	}
	n.left[k] = left
	return count
}
