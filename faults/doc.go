// Package faults describes the faults p2ptrace injects into a replayed or
// simulated run, parses their specs, and makes the seeded decisions of which
// message gets which fault.
//
// The engine (package gpu/sim) does not know about specs: it consults an
// Injector, once per run for Sync and Mutate and once per message for
// Message, in its own deterministic order. This package does not import the
// engine. A nil Injector, or NoFaults(), means no faults.
//
// # Spec language
//
// A fault spec is
//
//	KIND[:key=value,...]
//
// the same on the command line (p2ptrace replay --fault SPEC, repeatable) and
// in Go (Parse, ParseAll). Kinds, keys and op names are case-insensitive and
// spaces around them are ignored. Spec.String gives the canonical form (keys
// in a fixed order, defaults left out), which parses back to an equal Spec.
// HelpText is the --help text of the flag.
//
// # Kinds
//
//   - delay: adds virtual latency to the selected messages. It delays
//     message ordering and arrival, which exposes races (an AnySource receive
//     that depends on who arrives first) and timing assumptions.
//   - drop: a selected message never reaches its receiver; the receive that
//     would match it hangs. A hang found under drop is explained by the fault.
//   - mutate: in-flight send buffers (Isend and friends, stream sends) are
//     read at the latest legal moment, the sender's completion, instead of
//     when the transfer starts, so the program's own writes into a buffer it
//     still owes to a request reach the receiver; received data lands at the
//     receive's completion. With scribble=true the fault also fills the
//     buffers of pending nonblocking receives with garbage (0xA5 bytes) until
//     they complete, so a read before Wait sees it (Plan.Scribble).
//   - sync: zero buffering: every standard send behaves as synchronous (it
//     completes only once the matching receive has started). A deadlock under
//     sync is the program's latent bug (unsafe buffering), not the fault's.
//
// sync and mutate take no selectors; mutate's only key is scribble.
//
// # Selectors (delay and drop)
//
//	rank=N   the message's sender or receiver is rank N
//	src=N    the sender is rank N
//	dst=N    the receiver is rank N
//	tag=N    the message tag is N
//	op=NAME  the send op is NAME: Send, Ssend, Bsend, Rsend, Isend, Issend,
//	         Ibsend, Irsend, Sendrecv or Stream.Send (also StreamSend)
//	nth=N    only the N-th message (1-based) that matches the selectors above,
//	         counted per spec; nth=all: every one
//	p=X      each selected message is affected with probability X in [0,1]
//
// Selectors combine with "and". nth is applied before p: with nth=2,p=0.5 the
// second matching message is affected half the time. N must be a
// non-negative integer.
//
// # Amounts (delay)
//
//	d=DUR            a fixed delay
//	min=DUR,max=DUR  a delay drawn uniformly from [min, max]
//
// DUR is time.ParseDuration syntax (5ms, 200us, 1.5s), non-negative; d cannot
// be combined with min or max; min <= max. Without any of them a delay is
// uniform in [0, 200us] (DefaultMaxDelay); with only max, min is 0; with only
// min, max is min+200us.
//
// # Defaults
//
//	delay        every message with p=0.5, uniform in [0, 200us]: a jitter
//	delay:KEYS   p defaults to 0.5 if no rank, src, dst, tag, op or nth is
//	             given (an untargeted delay), else to 1 (every selected message)
//	drop         nth=1, p=1: the first message that matches; a bare drop drops
//	             the very first message of the run
//	mutate       scribble=false
//	sync         (no keys)
//
// # Errors
//
// A bad spec is a *SpecError wrapping ErrBadSpec. Its text names the bad part
// and lists the valid choices:
//
//	bad fault spec "delya": unknown kind "delya" (valid kinds: delay, drop, mutate, sync)
//	bad fault spec "delay:foo=1": unknown key "foo" for delay (valid keys: rank, src, dst, tag, op, nth, p, d, min, max)
//
// # Determinism
//
// NewPlan(specs, seed) is the seeded Injector. Its decisions depend only on
// the specs, the seed and the sequence of messages the engine asks about, so
// the same trace, specs and seed give the same faults, byte for byte.
// Randomness comes from math/rand/v2 PCG generators: one independent stream
// per spec and per purpose (the p decision, the delay amount), each seeded by
// a hash of (seed, spec index, purpose). So appending a spec does not change
// the decisions of the specs before it, and whether a message is delayed
// does not shift which amount the next delayed message gets. (A fault may
// still change which messages a program sends when it runs under the code
// driver; then the later decisions follow the new message sequence.)
//
// Plan.Injections lists the concrete injections made, in order: all of
// them up to MaxKept (4096), then the first MaxKept (Plan.Count and
// Plan.Complete say how many there were), so a plan's memory stays bounded
// over any number of messages; deciding stores nothing else per message.
// Fixed replays any list of injections exactly, matching messages by (Src,
// Dst, Seq); a harness shrinks a failing plan by replaying subsets of it
// (when the list is complete).
//
// # Example
//
//	specs, err := faults.ParseAll([]string{"delay:rank=1,max=5ms,p=0.3", "drop:src=0,dst=1,tag=3,nth=2", "sync"})
//	if err != nil { ... }
//	plan := faults.NewPlan(specs, 42)
//	// hand plan to the engine; afterwards:
//	for _, in := range plan.Injections() {
//		fmt.Println(in) // delay 1.234ms on rank 1 -> 0 tag 0 (Isend seq 7) ...
//	}
//	fmt.Println(faults.Args(specs)) // [--fault delay:rank=1,max=5ms,p=0.3 --fault drop:src=0,dst=1,tag=3,nth=2 --fault sync]
package faults

// HelpText documents the spec syntax for p2ptrace replay --help.
const HelpText = `Fault specs (--fault SPEC, repeatable): KIND[:key=value,...]

Kinds:
  delay    add virtual latency to selected messages
  drop     a selected message never reaches its receiver (the receive hangs)
  mutate   in-flight send buffers are read at the latest legal moment
           (key scribble=true: pending receive buffers hold garbage until they complete)
  sync     zero buffering: every standard send is synchronous
sync and mutate take no selectors.

Selectors (delay, drop; combined with "and"):
  rank=N   sender or receiver is rank N
  src=N    sender is rank N
  dst=N    receiver is rank N
  tag=N    message tag is N
  op=NAME  send op: Send, Ssend, Bsend, Rsend, Isend, Issend, Ibsend, Irsend,
           Sendrecv, Stream.Send (case-insensitive; StreamSend too)
  nth=N    only the N-th matching message (1-based, per spec); nth=all: every one
  p=X      a selected message is affected with probability X in [0,1]

Delay amounts (Go durations: 5ms, 200us, 1.5s):
  d=DUR            fixed delay
  min=DUR,max=DUR  uniform in [min, max] (min defaults to 0, max to min+200us)

Defaults:
  delay    every message with p=0.5, uniform in [0, 200us]; with a selector
           (rank, src, dst, tag, op, nth) p defaults to 1
  drop     nth=1, p=1: the first matching message (bare drop: the first message)

Examples:
  --fault delay                         random jitter on half the messages
  --fault delay:rank=1,max=5ms,p=0.3    up to 5ms on 30% of rank 1's messages
  --fault drop:src=0,dst=1,tag=3,nth=2  drop the 2nd tag-3 message from 0 to 1
  --fault sync --fault mutate

The same seed (--seed) with the same faults and trace gives the same report.
`
