package sim

import (
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// comm is what the engine knows of a communicator other than the world:
// which ranks used it (for the wait-for graph of a stuck barrier) and the
// barriers in progress on it.
type comm struct {
	members []bool   // by world rank: seen in some op on this comm
	entered []uint64 // by world rank: barriers entered on this comm so far
	// waiting holds, per barrier generation k, the calls of the ranks that
	// entered their k-th barrier and wait for the rest.
	waiting map[uint64][]*Op
}

func (e *Engine) comm(id int) *comm {
	c := e.comms[id]
	if c == nil {
		if e.comms == nil {
			e.comms = map[int]*comm{}
		}
		c = &comm{members: make([]bool, len(e.ranks)), entered: make([]uint64, len(e.ranks)), waiting: map[uint64][]*Op{}}
		e.comms[id] = c
	}
	return c
}

// noteComm remembers that rank r uses communicator id (the world needs no note).
func (e *Engine) noteComm(id, r int) {
	if id > 0 {
		e.comm(id).members[r] = true
	}
}

// blockOnSelf blocks the rank until its call op itself completes.
func (e *Engine) blockOnSelf(rk *rank, call *Op) {
	rk.one[0] = call
	rk.wait = waitAll
	rk.waitOn = rk.one[:]
	e.await(rk, rk.waitOn)
	rk.state = stateBlocked
	rk.blockedIn = call
}

// Barrier enters the rank's next barrier on call.Comm; call.Count is the
// number of ranks of that communicator (0: the whole world). The k-th barrier
// of a rank on a comm releases once Count ranks entered their k-th barrier on
// it; all resume at the latest arrival's time plus the link latency. It
// always returns false: even the last to arrive waits for that latency.
func (e *Engine) Barrier(call *Op) bool {
	rk := &e.ranks[call.Rank]
	e.observePost(call)
	c := e.comm(call.Comm)
	if call.Comm > 0 {
		c.members[rk.id] = true
	}
	need := int(call.Count)
	if need <= 0 {
		need = len(e.ranks)
	}
	k := c.entered[rk.id]
	c.entered[rk.id]++
	arrived := append(c.waiting[k], call)
	e.blockOnSelf(rk, call)
	if len(arrived) < need {
		c.waiting[k] = arrived
		return false
	}
	delete(c.waiting, k)
	var t int64
	for _, op := range arrived {
		t = max(t, op.PostT)
	}
	t += e.latency
	for _, op := range arrived {
		op.MatchT = t
		e.complete(op, t)
	}
	return false
}

// barrierWaitsOn lists the ranks a rank blocked in barrier call waits for:
// those that have not entered the same barrier (for the world, every other
// rank; for another comm, the ranks seen using it).
func (e *Engine) barrierWaitsOn(call *Op) []int {
	c := e.comms[call.Comm]
	if c == nil {
		return nil
	}
	k := c.entered[call.Rank] - 1
	in := make([]bool, len(e.ranks))
	for _, op := range c.waiting[k] {
		in[op.Rank] = true
	}
	var out []int
	for r := range e.ranks {
		if in[r] || (call.Comm > 0 && !c.members[r]) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Probe blocks the rank until a message matching call's envelope (Peer, Tag,
// Comm, with the wildcards of a receive) is available to it: arrived and not
// matched by a receive. It does not consume the message; its status goes to
// call.Source, StatusTag and StatusCnt.
func (e *Engine) Probe(call *Op) bool {
	rk := &e.ranks[call.Rank]
	e.observePost(call)
	if !e.validSource(call) {
		return true
	}
	e.noteComm(call.Comm, rk.id)
	if s := probeMatch(rk, call); s != nil {
		probeStatus(call, s)
		e.complete(call, rk.clock)
		return e.yieldIfLate(rk)
	}
	e.blockOnSelf(rk, call)
	rk.probing = true
	return false
}

// Iprobe is Probe without blocking: call.Flag says whether a message was
// available. An Iprobe that finds nothing counts as a fruitless poll: the
// rank may be parked (see Parked).
func (e *Engine) Iprobe(call *Op) {
	rk := &e.ranks[call.Rank]
	e.observePost(call)
	if !e.validSource(call) {
		return
	}
	e.noteComm(call.Comm, rk.id)
	found := probeMatch(rk, call)
	if found != nil {
		probeStatus(call, found)
		call.Flag = true
	}
	e.complete(call, rk.clock)
	if found == nil {
		e.polled(rk, call, nil) // the driver asks Parked
	} else if rk.polls = 0; e.nParked != 0 {
		e.changed(rk.clock)
	}
}

// validSource reports whether a receive-like call names a rank of the world
// (or AnySource); if not, the call fails as invalid and completes. A probe
// of ProcNull answers at once: a message from ProcNull.
func (e *Engine) validSource(op *Op) bool {
	if op.Peer == trace.ProcNull {
		op.Source, op.Flag = trace.ProcNull, true
		e.complete(op, e.ranks[op.Rank].clock)
		return false
	}
	if op.Peer == trace.AnySource || (op.Peer >= 0 && op.Peer < len(e.ranks)) {
		return true
	}
	op.Err = trace.ErrInvalid
	e.problem(Problem{Kind: verdict.InvalidCall, Ranks: []int{op.Rank}, Ops: []*Op{op},
		Message: fmt.Sprintf("rank %d: %s from rank %d, but the world has ranks 0..%d", op.Rank, op.Kind, op.Peer, len(e.ranks)-1)})
	e.complete(op, e.ranks[op.Rank].clock)
	return false
}

func probeStatus(probe, s *Op) {
	probe.Source, probe.StatusTag, probe.StatusCnt = s.Rank, s.Tag, s.Count
}

// probeArrived completes the probe dst is blocked in, if send (just left
// unmatched at dst) satisfies it.
func (e *Engine) probeArrived(dst *rank, send *Op, t int64) {
	if !dst.probing {
		return // (the rank's own flag: the call op's line is cold by now)
	}
	if p := dst.blockedIn; !p.done && envelopeMatches(send, p) {
		probeStatus(p, send)
		e.complete(p, t)
	}
}
