package gpu

import (
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Sentinel errors. Launch's error wraps the ones that apply; calls made on a
// stuck run return an error wrapping ErrStuck.
var (
	// ErrStuck: no rank could progress and nothing was in flight (a deadlock or hang).
	ErrStuck = errors.New("run is stuck")
	// ErrProblem: the run broke a rule of point-to-point communication
	// (truncation, type mismatch, missing Wait, unmatched send, ...).
	ErrProblem = errors.New("communication problem")
	// ErrPanic: a rank's function panicked.
	ErrPanic = errors.New("rank panicked")
	// ErrWatchdog: a rank ran host code without calling the runtime for longer
	// than the wall timeout (blocked on something of its own), or the run
	// outlived RunTimeout. The RunError names the rank and its last call (a
	// Problem of kind no-progress).
	ErrWatchdog = errors.New("rank stopped calling the runtime")
)

// RunError is the error of a Launch that did not end cleanly.
type RunError struct {
	// Findings is the run's verdict, as every door reports it: the engine's
	// problems, in-flight mutations a recording saw, crashed ranks and
	// ranks' own errors.
	Findings []verdict.Finding
	Problems []sim.Problem
	// RankErrors holds each rank's own returned error or panic, by rank (nil if none).
	RankErrors []error
	text       string
	sentinels  []error
}

func (e *RunError) Error() string { return e.text }

// Unwrap lets errors.Is find ErrStuck, ErrProblem, ErrPanic and the ranks' own errors.
func (e *RunError) Unwrap() []error {
	out := append([]error(nil), e.sentinels...)
	for _, err := range e.RankErrors {
		if err != nil && !errors.Is(err, ErrStuck) {
			out = append(out, err)
		}
	}
	return out
}

type world struct {
	eng      *sim.Engine
	ranks    []*Rank
	sites    *siteTable
	finished chan struct{}
	progress atomic.Uint64
	current  atomic.Int32
	stuck    bool
	// aborted: Launch gave up on the run (watchdog); the ranks unwind as
	// from a stuck run once one of them calls the runtime again.
	aborted atomic.Bool
	results []error
	rec     *recorder
	force   *forcedMatch
}

// Launch runs fn once per rank on the simulated backend and returns when every
// rank has returned, or the run is stuck (no rank can progress), or a rank
// stops calling the runtime for longer than the wall timeout. Exactly one rank
// runs at a time; the order is decided by virtual time and the seed.
func Launch(ranks int, fn func(r *Rank) error, opts ...Option) error {
	if ranks <= 0 {
		return fmt.Errorf("gpu: Launch with %d ranks: need at least 1", ranks)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.wallTimeout <= 0 {
		cfg.wallTimeout = defaultConfig().wallTimeout
	}
	sites := newSiteTable()
	rec, err := recordingFromEnv(&cfg, ranks, sites)
	if err != nil {
		return err
	}
	if rec == nil && cfg.sink != nil {
		rec = newRecorder(cfg.sink, HashFull, cfg.payloads, sites)
		if hs, ok := cfg.sink.(interface{ SetHeader(func(*trace.Header)) }); ok {
			hs.SetHeader(func(h *trace.Header) {
				h.WorldSize, h.Backend, h.EagerLimit, h.Seed = ranks, "sim", cfg.eager, cfg.seed
				h.LatencyNS, h.BandwidthBps = int64(cfg.latency), cfg.bandwidth
				rec.setHeader(h)
			})
		}
	}
	eager := cfg.eager
	if eager == 0 {
		eager = -1 // EagerLimit(0): nothing is small enough to go eagerly
	}
	observer := cfg.observer
	if rec != nil {
		if observer != nil {
			observer = teeObserver{rec, observer}
		} else {
			observer = rec
		}
	}
	w := &world{
		eng:      sim.New(sim.Config{Ranks: ranks, Seed: cfg.seed, EagerLimit: eager, Latency: cfg.latency, Bandwidth: cfg.bandwidth, Faults: cfg.faults, PollLimit: cfg.pollLimit, Observer: observer}),
		sites:    sites,
		finished: make(chan struct{}),
		results:  make([]error, ranks),
		rec:      rec,
		force:    cfg.force,
	}
	w.current.Store(-1)
	for i := range ranks {
		rk := &Rank{w: w, id: i, wake: make(chan struct{}, 1)}
		rk.def = &Stream{r: rk, id: 0}
		w.ranks = append(w.ranks, rk)
	}
	for _, rk := range w.ranks {
		go rk.main(fn)
	}
	var sigs chan os.Signal
	if rec != nil && rec.file != nil {
		// Recording for p2ptrace record: an interrupt flushes and marks the
		// trace before the signal does what it would have done.
		sigs = make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sigs)
	}
	w.schedule(nil)
	if err := w.watch(cfg.wallTimeout, cfg.runTimeout, sigs, rec); err != nil {
		// Ranks that still call the runtime unwind now: wait a moment for
		// them, so that only a rank spinning in its own code is left behind.
		grace := time.NewTimer(abortGrace)
		select {
		case <-w.finished:
		case <-grace.C:
		}
		grace.Stop()
		if rec != nil && rec.file != nil {
			// The ranks have unwound, or the one left spins in its own
			// code (not in the engine, whose calls fail now): the trace can
			// be closed, marked with the finding.
			status, fs := Outcome(err)
			rec.file.SetHeader(func(h *trace.Header) { h.Findings = fs })
			_ = rec.file.Close(status, "")
			if rec.reported {
				err = reportedError(err)
			}
		}
		return err
	}
	err = w.result()
	if rec != nil && rec.file != nil {
		status, fs := Outcome(err)
		rec.file.SetHeader(func(h *trace.Header) { h.Findings = fs })
		if cerr := rec.file.Close(status, ""); cerr != nil {
			return errors.Join(err, fmt.Errorf("gpu: writing the trace: %w", cerr))
		}
		if rec.reported {
			err = reportedError(err)
		}
	}
	return err
}

// abortGrace is how long Launch waits, once it gave up on a run, for the
// ranks to unwind.
const abortGrace = 200 * time.Millisecond

type teeObserver [2]sim.Observer

func (t teeObserver) Posted(op *sim.Op)    { t[0].Posted(op); t[1].Posted(op) }
func (t teeObserver) Completed(op *sim.Op) { t[0].Completed(op); t[1].Completed(op) }

// watch waits for the run to end, failing when no runtime call is made for
// d, or when the whole run takes longer than total (if positive). A rank
// spinning in its own code cannot be stopped (Go cannot kill a goroutine):
// its goroutine is abandoned, and the others with it, until it calls the
// runtime again; then every rank unwinds as from a stuck run and returns.
func (w *world) watch(d, total time.Duration, sigs chan os.Signal, rec *recorder) error {
	step := min(d/4+time.Millisecond, 100*time.Millisecond)
	if total > 0 {
		step = min(step, total/4+time.Millisecond)
	}
	tick := time.NewTicker(step)
	defer tick.Stop()
	start := time.Now()
	last, since := w.progress.Load(), start
	for {
		select {
		case <-w.finished:
			return nil
		case sig := <-sigs:
			_ = rec.file.Close(trace.StatusCrashed, fmt.Sprintf("interrupted by %v: the run was stopped", sig))
			signal.Stop(sigs)
			if s, ok := sig.(syscall.Signal); ok {
				_ = syscall.Kill(os.Getpid(), s)
			}
			time.Sleep(time.Second)
			os.Exit(130)
		case <-tick.C:
			if total > 0 && time.Since(start) >= total {
				return w.noProgress(fmt.Sprintf("the run did not end within %v", total))
			}
			if p := w.progress.Load(); p != last {
				last, since = p, time.Now()
				continue
			}
			if time.Since(since) >= d {
				return w.noProgress(fmt.Sprintf("rank %d ran for %v without calling the runtime", w.current.Load(), d))
			}
		}
	}
}

// noProgress gives up on the run: the error names the rank that holds the
// CPU and its last runtime call (a Problem of kind no-progress).
func (w *world) noProgress(what string) error {
	w.aborted.Store(true)
	r := int(w.current.Load())
	p := sim.Problem{Kind: verdict.NoProgress}
	last := "it had made no runtime call yet"
	if r >= 0 && r < len(w.ranks) {
		p.Ranks = []int{r}
		if op := w.ranks[r].last.Load(); op != nil {
			// A copy of what the call passed (set before the Store): the
			// abandoned rank may still run.
			c := &sim.Op{Rank: op.Rank, Seq: op.Seq, Kind: op.Kind, Peer: op.Peer, Tag: op.Tag, Comm: op.Comm, Bytes: op.Bytes, Site: op.Site}
			p.Ops = []*sim.Op{c}
			last = "its last runtime call was " + sim.Describe(c) + w.sites.at(c.Site)
		}
	}
	p.Message = fmt.Sprintf("%s: rank %d runs code of its own (a loop, channel or lock?); %s. Its goroutine is abandoned: Go cannot stop it", what, r, last)
	f := p.Finding(w.sites.format)
	rep := verdict.Report{Findings: []verdict.Finding{f}}
	return &RunError{Findings: rep.Findings, Problems: []sim.Problem{p}, RankErrors: make([]error, len(w.ranks)),
		text: strings.TrimSuffix(rep.Text(), "\n"), sentinels: []error{ErrWatchdog}}
}

func (rk *Rank) main(fn func(*Rank) error) {
	<-rk.wake
	err := rk.call(fn)
	w := rk.w
	w.results[rk.id] = err
	rk.exited = true
	if w.aborted.Load() {
		w.stuck = true
	}
	if !w.stuck {
		w.progress.Add(1)
		if errors.Is(err, ErrPanic) {
			// A crash is its own finding: what the rank left pending, and
			// waits on it, are its effects (as in a replay of its trace,
			// whose record of the rank ends here).
			w.eng.Cut(rk.id)
		} else {
			call := w.eng.NewOp(rk.id, opFinalize)
			call.Site = 0
			w.eng.Post(call)
			w.eng.Finalize(call)
		}
	}
	w.schedule(rk)
}

// call runs the user's function, turning a panic into that rank's error.
func (rk *Rank) call(fn func(*Rank) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			rk.panicAt = rk.w.sites.panicSite()
			err = fmt.Errorf("%w: rank %d: %v\n%s", ErrPanic, rk.id, v, debug.Stack())
		}
	}()
	return fn(rk)
}

// schedule runs the engine on the calling goroutine until it knows which rank
// runs next, then hands over to it. from is the rank giving up the CPU (nil for
// Launch itself); if from has exited it does not wait to be woken again.
func (w *world) schedule(from *Rank) {
	next := -1
	if !w.stuck {
		r, ok := w.eng.Next()
		switch {
		case ok:
			next = r
		case w.eng.Stuck():
			w.stuck = true
		default:
			w.eng.End()
		}
	}
	if w.stuck {
		// Unwind: every rank still alive gets the CPU in turn, its blocked
		// call returning ErrStuck, until it returns.
		if from != nil && !from.exited {
			return
		}
		for _, rk := range w.ranks {
			if !rk.exited {
				next = rk.id
				break
			}
		}
	}
	if next < 0 {
		close(w.finished)
		return
	}
	if from != nil && next == from.id && !from.exited {
		w.current.Store(int32(next))
		return
	}
	w.current.Store(int32(next))
	w.ranks[next].wake <- struct{}{}
	if from != nil && !from.exited {
		<-from.wake
	}
}

func (w *world) result() error {
	problems := w.eng.Problems()
	if ov := w.overlapProblems(); len(ov) > 0 {
		problems = append(problems[:len(problems):len(problems)], ov...)
	}
	if w.rec != nil {
		// Only a recording hashes payloads, so only it sees in-flight mutations.
		problems = append(problems, w.rec.mutationProblems()...)
	}
	var sentinels []error
	var fs []verdict.Finding
	for i := range problems {
		p := &problems[i]
		fs = append(fs, p.Finding(w.sites.format))
		if p.Kind.Stuck() {
			sentinels = appendOnce(sentinels, ErrStuck)
		} else {
			sentinels = appendOnce(sentinels, ErrProblem)
		}
	}
	for i, err := range w.results {
		if err == nil || errors.Is(err, ErrStuck) {
			continue
		}
		if errors.Is(err, ErrPanic) {
			sentinels = appendOnce(sentinels, ErrPanic)
		}
		fs = append(fs, w.rankFinding(i, err))
	}
	// A bug at a call in a loop is one finding (the same kind and ops), as
	// check keeps them.
	fs = verdict.Dedup(fs)
	if len(fs) == 0 {
		return nil
	}
	rep := verdict.Report{Findings: fs}
	text := strings.TrimSuffix(rep.Text(), "\n")
	for i, err := range w.results {
		if errors.Is(err, ErrPanic) {
			// The finding has the panic's line; the stack is for the programmer.
			_, stack, _ := strings.Cut(err.Error(), "\n")
			text += fmt.Sprintf("\n\nrank %d's panic:\n%s", i, strings.TrimSuffix(stack, "\n"))
		}
	}
	return &RunError{Findings: fs, Problems: problems, RankErrors: w.results, text: text, sentinels: sentinels}
}

// Outcome is how a trace of a run that returned err ends: its status
// (complete; hung when the run was stuck or stopped by the watchdog;
// crashed when a rank panicked) and
// the run's findings. The one mapping from a run's error to a trace.
func Outcome(err error) (trace.Status, []verdict.Finding) {
	if err == nil {
		return trace.StatusComplete, nil
	}
	var fs []verdict.Finding
	var re *RunError
	if errors.As(err, &re) {
		fs = re.Findings
	}
	switch {
	case errors.Is(err, ErrPanic):
		return trace.StatusCrashed, fs
	case errors.Is(err, ErrStuck), errors.Is(err, ErrWatchdog):
		return trace.StatusHung, fs // a watchdog's run was stopped: no-progress
	}
	return trace.StatusComplete, fs
}

// rankFinding is the finding of rank r's own error or panic: a crash or a
// rank-error at the rank's last runtime call, as a trace of the run reports it.
func (w *world) rankFinding(r int, err error) verdict.Finding {
	var ops []verdict.OpRef
	if last := w.ranks[r].last.Load(); last != nil {
		ops = append(ops, sim.Ref(last, w.sites.format))
	}
	if errors.Is(err, ErrPanic) {
		msg := crashMessage(r, err)
		if at := w.ranks[r].panicAt; at != "" {
			msg += " (at " + at + ")"
		}
		return verdict.New(verdict.Crash, []int{r}, msg, ops...)
	}
	return verdict.New(verdict.RankError, []int{r}, fmt.Sprintf("rank %d returned an error: %v", r, err), ops...)
}

// crashMessage is the one-line message of a rank's crash: its panic value,
// without the stack (which the RunError keeps).
func crashMessage(r int, err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	msg = strings.TrimPrefix(msg, ErrPanic.Error()+": ")
	msg = strings.TrimPrefix(msg, fmt.Sprintf("rank %d: ", r))
	return fmt.Sprintf("rank %d crashed: panic: %s", r, msg)
}

func appendOnce(errs []error, err error) []error {
	for _, e := range errs {
		if e == err {
			return errs
		}
	}
	return append(errs, err)
}
