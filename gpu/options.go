package gpu

import (
	"time"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu/sim"
)

// Option configures Launch.
type Option func(*config)

type config struct {
	seed        uint64
	eager       int64
	latency     time.Duration
	bandwidth   float64
	faults      faults.Injector
	wallTimeout time.Duration
	observer    sim.Observer
	sink        EventSink
	payloads    bool // RecordPayloads
	force       *forcedMatch
	pollLimit   int
	runTimeout  time.Duration
}

// forcedMatch restricts one AnySource receive to one sender (ForceMatch).
type forcedMatch struct {
	rank int
	seq  uint64
	src  int
}

func defaultConfig() config {
	return config{eager: sim.DefaultEagerLimit, latency: sim.DefaultLatency, bandwidth: sim.DefaultBandwidth, wallTimeout: 30 * time.Second}
}

// Seed sets the seed of the scheduler that breaks ties in virtual time.
func Seed(s uint64) Option { return func(c *config) { c.seed = s } }

// EagerLimit sets the largest message, in bytes, that a standard send
// delivers eagerly (completing locally). Larger ones use rendezvous. A
// negative limit disables eager sends.
func EagerLimit(bytes int64) Option { return func(c *config) { c.eager = bytes } }

// Link sets the link model: a transfer of n bytes costs latency + n/bandwidth
// (bandwidth in bytes per second).
func Link(latency time.Duration, bandwidth float64) Option {
	return func(c *config) { c.latency, c.bandwidth = latency, bandwidth }
}

// Faults runs the program under a fault injector (see package faults).
func Faults(inj faults.Injector) Option { return func(c *config) { c.faults = inj } }

// WallTimeout sets how long a rank may run host code without calling the
// runtime before Launch gives up on it (default 30s): a rank blocked on a
// channel or lock of its own cannot be stopped by the engine.
func WallTimeout(d time.Duration) Option { return func(c *config) { c.wallTimeout = d } }

// WithObserver lets a recorder see every op the engine processes.
func WithObserver(o sim.Observer) Option { return func(c *config) { c.observer = o } }

// ForceMatch restricts rank's AnySource receive number seq (its op sequence
// number, as a trace and check name it) to messages from rank src: the
// program runs as it would if src's message had come first. check re-runs a
// program this way to judge a message race (p2ptrace record --force-match,
// and harness.Run's check battery).
func ForceMatch(rank int, seq uint64, src int) Option {
	return func(c *config) { c.force = &forcedMatch{rank, seq, src} }
}

// PollLimit sets how many polls in a row that find nothing (Test or Testall
// answering "not yet") park a rank until the world changes (default
// sim.DefaultPollLimit; negative: never). A run whose live ranks all poll, or
// wait, for what no rank can send then ends as a hang naming the polls,
// instead of spinning through virtual time.
func PollLimit(n int) Option { return func(c *config) { c.pollLimit = n } }

// RunTimeout bounds the whole run in wall-clock time (default: none; the
// harness sets its Timeout). Past it Launch returns a RunError wrapping
// ErrWatchdog with a no-progress Problem naming the running rank and its last
// call. A rank that spins in code of its own cannot be stopped (Go cannot
// kill a goroutine): its goroutine runs on, and the other ranks' wait, until
// it next calls the runtime; then all of them return.
func RunTimeout(d time.Duration) Option { return func(c *config) { c.runTimeout = d } }
