package faults

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"
)

// An Injection is one concrete fault a Plan applied to one message. A list of
// them, or any subset, replays exactly through Fixed.
type Injection struct {
	Spec     int    // index of the spec in the plan that made it (-1 if unknown)
	Kind     Kind   // Delay or Drop
	Src, Dst int    // the message's ends
	Tag      int    // the message's tag
	Op       string // the send op, as in Message.Op
	Seq      uint64 // the sender's op sequence number
	Delay    time.Duration
	Drop     bool
}

// String reads like "delay 37us on rank 0 -> 1 tag 3 (Isend seq 4)" or
// "drop on rank 0 -> 1 tag 3 (Isend seq 4)".
func (in Injection) String() string {
	what := string(in.Kind)
	if in.Drop {
		what = "drop"
	} else if in.Kind == Delay || in.Delay != 0 {
		what = "delay " + fmtDur(in.Delay)
	}
	op := in.Op
	if op != "" {
		op += " "
	}
	return fmt.Sprintf("%s on rank %d -> %d tag %d (%sseq %d)", what, in.Src, in.Dst, in.Tag, op, in.Seq)
}

// Purposes of the random streams of one spec. Each (seed, spec index,
// purpose) has its own PCG stream.
const (
	purposeP      = 1 // whether a selected message is affected (p)
	purposeAmount = 2 // how long a delay is
)

func stream(seed uint64, spec int, purpose uint64) *rand.Rand {
	var buf [8 * 4]byte
	copy(buf[:8], "p2pfault")
	binary.LittleEndian.PutUint64(buf[8:], seed)
	binary.LittleEndian.PutUint64(buf[16:], uint64(spec))
	binary.LittleEndian.PutUint64(buf[24:], purpose)
	h := sha256.Sum256(buf[:])
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])))
}

type specState struct {
	spec    Spec
	matches int        // messages that matched the selectors (for nth)
	p       *rand.Rand // the p decisions
	amount  *rand.Rand // the delay amounts
}

// MaxKept is how many injections a Plan keeps to list (Injections). It
// counts every injection, but keeps only the first MaxKept: what a harness
// shrinks (replaying subsets through Fixed) and what a report names. A run
// with more injections than that is too big to shrink by replaying subsets
// anyway; Complete says whether the list is whole. So a plan's memory is
// bounded whatever the number of messages (before this cap, a delay with
// p=0.5 over 1M messages kept ~0.5M injections: ~250 B per decision
// allocated, growing the list).
const MaxKept = 4096

// A Plan is the seeded Injector of a list of specs. Its decisions depend
// only on the specs, the seed and the sequence of messages it is asked
// about: the same three give the same decisions. Each spec draws from its own
// streams, derived from (seed, its index, purpose), so appending a spec leaves
// the decisions of the earlier ones unchanged, and the p decisions and the
// delay amounts of one spec do not share a stream. Deciding stores nothing
// per message beyond the first MaxKept injections.
//
// A Plan is not safe for concurrent use; the engine asks it from one
// goroutine.
type Plan struct {
	seed     uint64
	specs    []specState
	sync     bool
	mutate   bool
	scribble bool
	inj      []Injection // the first MaxKept injections
	count    int         // all injections made
	drops    int         // of which drops
}

// NewPlan returns the Plan of specs under seed. Specs should come from Parse
// (or pass Validate).
func NewPlan(specs []Spec, seed uint64) *Plan {
	p := &Plan{seed: seed, specs: make([]specState, len(specs))}
	for i, s := range specs {
		p.specs[i] = specState{spec: s, p: stream(seed, i, purposeP), amount: stream(seed, i, purposeAmount)}
		switch s.Kind {
		case Sync:
			p.sync = true
		case Mutate:
			p.mutate = true
			p.scribble = p.scribble || s.Scribble
		}
	}
	return p
}

// Seed returns the plan's seed.
func (p *Plan) Seed() uint64 { return p.seed }

// Specs returns a copy of the plan's specs.
func (p *Plan) Specs() []Spec {
	out := make([]Spec, len(p.specs))
	for i, s := range p.specs {
		out[i] = s.spec
	}
	return out
}

// Sync reports whether a sync spec is in the plan.
func (p *Plan) Sync() bool { return p.sync }

// Mutate reports whether a mutate spec is in the plan.
func (p *Plan) Mutate() bool { return p.mutate }

// Scribble reports whether a mutate spec asks the fault to overwrite
// in-flight send buffers itself (mutate:scribble=true).
func (p *Plan) Scribble() bool { return p.scribble }

// Injections returns a copy of the injections made so far, in the order they
// were made (message by message, and within one message by spec index): all
// of them while Complete, else the first MaxKept.
func (p *Plan) Injections() []Injection { return append([]Injection(nil), p.inj...) }

// Count is the number of injections made so far (kept or not).
func (p *Plan) Count() int { return p.count }

// Drops is the number of drops made so far (kept or not).
func (p *Plan) Drops() int { return p.drops }

// Complete reports whether Injections lists every injection made: at most
// MaxKept were made.
func (p *Plan) Complete() bool { return p.count == len(p.inj) }

func (s Spec) selects(m Message) bool {
	return (!s.Rank.Set || s.Rank.V == m.Src || s.Rank.V == m.Dst) &&
		s.Src.match(m.Src) && s.Dst.match(m.Dst) && s.Tag.match(m.Tag) &&
		(s.Op == "" || s.Op == m.Op || opEqual(s.Op, m.Op))
}

func opEqual(canon, op string) bool {
	c, ok := canonOp(op)
	return ok && c == canon
}

// Message decides the fate of m. For each delay or drop spec, in order: the
// message must match its selectors (rank, src, dst, tag, op); it then counts
// towards nth; if it is the nth match (or nth is all), it is affected with
// probability p. Delays of several specs add up; a drop wins (the Action has
// Drop set and no Delay).
func (p *Plan) Message(m Message) Action {
	var a Action
	for i := range p.specs {
		st := &p.specs[i]
		s := st.spec
		if s.Kind != Delay && s.Kind != Drop {
			continue
		}
		if !s.selects(m) {
			continue
		}
		st.matches++
		if s.Nth != 0 && st.matches != s.Nth {
			continue
		}
		if s.P < 1 && (s.P <= 0 || st.p.Float64() >= s.P) {
			continue
		}
		in := Injection{Spec: i, Kind: s.Kind, Src: m.Src, Dst: m.Dst, Tag: m.Tag, Op: m.Op, Seq: m.Seq}
		if s.Kind == Drop {
			in.Drop = true
		} else {
			in.Delay = s.Min
			if s.Max > s.Min {
				in.Delay += time.Duration(st.amount.Uint64N(uint64(s.Max-s.Min) + 1))
			}
		}
		p.count++
		if in.Drop {
			p.drops++
		}
		if len(p.inj) < MaxKept {
			p.inj = append(p.inj, in)
		}
		a = a.add(in)
	}
	return a
}

func (a Action) add(in Injection) Action {
	if in.Drop {
		a.Drop = true
	}
	if a.Drop {
		a.Delay = 0
		return a
	}
	a.Delay = addSat(a.Delay, in.Delay)
	return a
}

type msgKey struct {
	src, dst int
	seq      uint64
}

type fixed struct {
	sync, mutate bool
	by           map[msgKey][]Injection // read-only after Fixed
}

// Fixed returns an Injector that applies exactly the given injections,
// matching messages by (Src, Dst, Seq), and no others; sync and mutate are
// the plan-wide switches. Fed a Plan's Injections, it makes the same Actions
// the Plan made; fed a subset, exactly that subset (this is what a harness
// uses to shrink a failing fault plan). It is safe for concurrent use.
func Fixed(sync, mutate bool, inj []Injection) Injector {
	f := fixed{sync: sync, mutate: mutate, by: make(map[msgKey][]Injection, len(inj))}
	for _, in := range inj {
		k := msgKey{in.Src, in.Dst, in.Seq}
		f.by[k] = append(f.by[k], in)
	}
	return f
}

func (f fixed) Sync() bool   { return f.sync }
func (f fixed) Mutate() bool { return f.mutate }
func (f fixed) Message(m Message) Action {
	var a Action
	for _, in := range f.by[msgKey{m.Src, m.Dst, m.Seq}] {
		a = a.add(in)
	}
	return a
}

type noFaults struct{}

func (noFaults) Sync() bool             { return false }
func (noFaults) Mutate() bool           { return false }
func (noFaults) Message(Message) Action { return Action{} }

// NoFaults returns an Injector that injects nothing. The engine also treats
// a nil Injector as no faults.
func NoFaults() Injector { return noFaults{} }
