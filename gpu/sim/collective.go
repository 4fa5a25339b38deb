package sim

import (
	"fmt"
	"maps"
	"slices"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// comm is what the engine knows of a communicator other than the world:
// which ranks used it (for the wait-for graph of a stuck collective) and the
// collectives in progress on it.
type comm struct {
	members []bool   // by world rank: seen in some op on this comm
	entered []uint64 // by world rank: collectives entered on this comm so far
	// waiting holds, per generation k, the k-th collective: the calls of
	// the ranks that entered it, until every member did.
	waiting map[uint64]*collective
	// gen holds the generation k of each nonblocking call not complete
	// (its rank may have entered later collectives since).
	gen map[*Op]uint64
	// disagreed: two members' calls disagreed (a collective-mismatch):
	// their later calls no longer correspond.
	disagreed bool
}

// collective is one collective call of a communicator in progress: the
// k-th call of each member (MPI-3.1 sec. 5.1: all members call the same
// collectives in the same order).
//
// It refers to no call that completed: the driver may recycle those (see
// Release); it keeps what the rules need of each (entries, and the
// summaries below that spare the rules a walk over them), a copy of the
// first call (the others are compared with it) and the calls still
// waiting (pending).
type collective struct {
	entries []collEntry // the members' calls, in the order they entered
	pending []*Op       // those not complete, in the same order
	first   Op
	last    int64     // the latest entry
	root    collEntry // the entry of first's root (rank -1 until it entered)
	// For a Scan or Exscan (first's kind): low is the lowest rank in the
	// communicator that has not entered, upTo[i] the latest entry of
	// ranks 0..i (for i < low); tagT[i] is rank i's entry (-1: none yet).
	low        int
	upTo, tagT []int64
	// typed and reduced are copies of the first calls that recorded a
	// datatype and a reduction op the rules compare (a known basic type
	// with data, a predefined op), nil until one did: the first call may
	// have recorded neither (an opaque type, a user-defined op), and then
	// two later members that differ from each other still disagree.
	typed, reduced *Op
	// mismatched: a call disagreed with the first (reported once).
	mismatched bool
}

// collEntry is what the rules read of a member's call.
type collEntry struct {
	rank, tag int // world rank, rank in the communicator (Op.Tag)
	postT     int64
}

func (e *Engine) comm(id int) *comm {
	c := e.comms[id]
	if c == nil {
		if e.comms == nil {
			e.comms = map[int]*comm{}
		}
		c = &comm{members: make([]bool, len(e.ranks)), entered: make([]uint64, len(e.ranks)), waiting: map[uint64]*collective{}}
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
// It is Collective of an OpBarrier call.
func (e *Engine) Barrier(call *Op) bool { return e.Collective(call) }

// Collective enters the rank's next collective on call.Comm (a Barrier,
// Bcast, ... Exscan: call.Kind; the rules are in collrules.go): call.Count
// is the number of ranks of that communicator (0: the whole world), Peer
// the root's world rank, Tag the caller's rank in the communicator, Bytes
// its side of the type signature (and Dtype its type), Stream a
// reduction's trace.ReduceOp. The k-th collective a rank enters on a comm
// is the k-th of every other member; a call that disagrees with the first
// of them in kind, root, size, datatype or reduction op (collMismatch) is
// a collective-mismatch. The call completes once the members it depends on
// (collReady) entered, at the latest of their entries plus the link
// latency (at its own entry if it depends on none). It returns false: the rank resumes through the queue.
func (e *Engine) Collective(call *Op) bool {
	e.enterColl(call, false)
	return false
}

// Icollective initiates a nonblocking collective (Ibarrier ... Iexscan:
// call.Kind, fields as Collective's) of a rank whose request the driver
// made (NewRequest). MPI-3.1 sec. 5.12: "As in the nonblocking
// point-to-point case, all calls are local and return immediately,
// irrespective of the status of other processes", and "all processes must
// call collective operations (blocking and nonblocking) in the same order
// per communicator": the call takes the communicator's next collective as
// a blocking call does, is compared with the other members' calls the
// same way (a nonblocking call never matches a blocking one: collMismatch),
// and never blocks the rank, under sync neither. Its request completes by
// its blocking form's data dependencies (collReady; under sync, once every
// member entered), never earlier (sec. 5.12.1, Ibarrier: "the usual
// barrier semantics are enforced at the corresponding completion operation
// (test or wait)"): a Wait or Test on it is the request
// machinery's, and a request never completed by one is a missing wait at
// Finalize as an Isend's. It returns false when the rank must yield.
func (e *Engine) Icollective(call *Op) bool {
	e.enterColl(call, true)
	return e.yieldIfLate(&e.ranks[call.Rank])
}

// enterColl enters call, a blocking collective (which blocks its rank
// until it completes) or a nonblocking one (which does not), in its
// communicator's next collective.
func (e *Engine) enterColl(call *Op, nonblocking bool) {
	rk := &e.ranks[call.Rank]
	e.observePost(call)
	c := e.comm(int(call.Comm))
	if call.Comm > 0 {
		c.members[rk.id] = true
	}
	need := collSize(call, len(e.ranks))
	k := c.entered[rk.id]
	c.entered[rk.id]++
	in := c.waiting[k]
	// A negative size is a negative count (Bytes is the count times the
	// type's size; Count is the communicator's size): MPI_ERR_COUNT.
	negative := call.Bytes < 0
	bad := negative || rooted(call.Kind) && (call.Peer < 0 || int(call.Peer) >= len(e.ranks))
	if in == nil {
		in = newCollective(call, min(need, len(e.ranks)))
	}
	if bad {
		// The MPI call fails (MPI_ERR_COUNT, MPI_ERR_ROOT); its
		// disagreement with the others' calls is that error, not another
		// finding.
		in.mismatched = true
		call.Err = trace.ErrInvalid
		msg := fmt.Sprintf("rank %d: %s, but the world has ranks 0..%d", call.Rank, e.describe(call), len(e.ranks)-1)
		if negative {
			msg = fmt.Sprintf("rank %d: %s: a count is never negative", call.Rank, e.describe(call))
		}
		e.problem(Problem{Kind: verdict.InvalidCall, Ranks: []int{int(call.Rank)}, Ops: []*Op{call}, Message: msg})
	} else if len(in.entries) > 0 && !in.mismatched && (call.Kind != in.first.Kind || call.Peer != in.first.Peer || call.Bytes != in.first.Bytes ||
		call.Dtype != in.first.Dtype || call.Stream() != in.first.Stream()) {
		// (A call like the first in all of these disagrees with no one.)
		for i, w := range [...]*Op{&in.first, in.typed, in.reduced} {
			if w == nil || i > 0 && w == &in.first {
				continue
			}
			a, b := w, call
			if b.Rank < a.Rank {
				a, b = b, a
			}
			if why := collMismatch(a, b, e.cfg.AsyncMatches); why != "" {
				in.mismatched, c.disagreed = true, true
				e.problem(e.mismatchProblem(a, b, k, why))
				break
			}
		}
	}
	if !in.mismatched && len(in.entries) > 0 {
		in.witness(call, false) // (the first call's: see newCollective)
	}
	// Whether the entry may let waiting calls complete: the last one, the
	// root's, one that extends a Scan's prefix (or any, once the calls
	// disagree: each follows its own rule).
	wake := in.enter(call) || in.mismatched
	if !nonblocking {
		e.blockOnSelf(rk, call)
	}
	full := len(in.entries) >= need
	if !full {
		c.waiting[k] = in
	} else {
		delete(c.waiting, k)
	}
	if bad {
		// It fails at once, and its entry may be the one the others
		// waited for (a Reduce's root for the last member): wake them.
		e.complete(call, call.PostT)
	} else {
		in.pending = append(in.pending, call)
		if nonblocking {
			if c.gen == nil {
				c.gen = map[*Op]uint64{}
			}
			c.gen[call] = k
		}
		if !full && !wake {
			// Only the call itself may complete now (one that waits for
			// every member never does before the last entry).
			if e.collRule(call) == ruleAll {
				return
			}
			if t, ok := e.collReady(in, call, need, e.sync); ok {
				in.pending = in.pending[:len(in.pending)-1]
				e.collDone(c, call, t)
			}
			return
		}
	}
	left := in.pending[:0]
	for _, op := range in.pending {
		if t, ok := e.collReady(in, op, need, e.sync); ok {
			e.collDone(c, op, t)
		} else {
			left = append(left, op)
		}
	}
	clear(in.pending[len(left):])
	in.pending = left
}

// collDone completes op, a call of a collective of comm c, at time t. A
// blocking call's rank is blocked in it until then (its completion wakes
// the rank at t). A nonblocking call's rank runs on: a completion later
// than both the engine's time and the rank's clock is queued for time t,
// so that a Wait or Test the rank makes before t finds the request
// pending (never complete before its dependencies allow). The queued
// event is a transfer's completion of an op matched with itself
// (transferDone completes op; it has no payload to copy).
func (e *Engine) collDone(c *comm, op *Op, t int64) {
	e.noteMatchT(op, t)
	if !op.Kind.IsNonblockingCollective() {
		e.complete(op, t)
		return
	}
	delete(c.gen, op)
	if t <= max(e.now, e.ranks[op.Rank].clock) {
		e.complete(op, t)
		return
	}
	op.match = op
	e.pushOp(t, evComplete, op)
}

// collOf is the collective in progress that call, a pending collective
// call of its rank, belongs to (nil if none): a blocking call is its
// rank's latest on the communicator, a nonblocking one may be older.
func (e *Engine) collOf(call *Op) *collective {
	_, in := e.collGen(call)
	return in
}

// collGen is collOf with the collective's generation k on its comm.
func (e *Engine) collGen(call *Op) (uint64, *collective) {
	c := e.comms[int(call.Comm)]
	if c == nil {
		return 0, nil
	}
	k, ok := c.gen[call]
	if !ok {
		k = c.entered[call.Rank] - 1
	}
	return k, c.waiting[k]
}

// witness makes call the collective's typed or reduced call if it is the
// first whose datatype or reduction op the rules compare (collMismatch:
// typesDiffer, reduceOpsDiffer): the first call's own copy, else a copy of
// call (a call may be recycled once it completes).
func (in *collective) witness(call *Op, first bool) {
	// (Cheap tests first: most calls record no type or op the rules compare.)
	typed := in.typed == nil && call.Bytes > 0 && call.Dtype.Basic() && sameType(call.Kind)
	reduced := in.reduced == nil && call.Stream() > 0 && reduceOp(call).Predefined()
	if !typed && !reduced {
		return
	}
	w := &in.first
	if !first {
		c := call.Copy()
		c.bits |= bitKept // (a copy: never released)
		w = &c
	}
	if typed {
		in.typed = w
	}
	if reduced {
		in.reduced = w
	}
}

// newCollective is the k-th collective of a comm of n members, first
// entered by call (room for n entries at once: no growing).
func newCollective(call *Op, n int) *collective {
	in := &collective{first: call.Copy(), root: collEntry{rank: -1}, entries: make([]collEntry, 0, n), pending: make([]*Op, 0, n)}
	in.first.bits |= bitKept // (a copy: never released)
	in.witness(&in.first, true)
	if ruleOf(call.Kind) == rulePrefix {
		in.upTo, in.tagT = make([]int64, n), make([]int64, n)
		for i := range in.tagT {
			in.tagT[i] = -1
		}
	}
	return in
}

// enter notes the entry of call and reports whether it may let other calls
// complete: its root's entry, a Scan's prefix extended.
func (in *collective) enter(call *Op) bool {
	en := collEntry{int(call.Rank), int(call.Tag), call.PostT}
	in.entries = append(in.entries, en)
	in.last = max(in.last, en.postT)
	wake := false
	if en.rank == int(in.first.Peer) && in.root.rank < 0 {
		in.root, wake = en, true
	}
	if in.tagT != nil && en.tag >= 0 && en.tag < len(in.tagT) && in.tagT[en.tag] < 0 {
		in.tagT[en.tag] = en.postT
		for ; in.low < len(in.tagT) && in.tagT[in.low] >= 0; in.low++ {
			t := in.tagT[in.low]
			if in.low > 0 {
				t = max(t, in.upTo[in.low-1])
			}
			in.upTo[in.low], wake = t, true
		}
	}
	return wake
}

// collReady says whether op, a call of collective in, may complete (its
// rule under sync or not, see collRule), and when: the latest entry of
// the calls it depends on plus the latency, or its own entry without any.
func (e *Engine) collReady(in *collective, op *Op, need int, sync bool) (int64, bool) {
	rule := ruleOf(op.Kind)
	if sync {
		rule = ruleAll
	}
	t, deps := op.PostT, 0
	switch {
	case rule == ruleAll || rule == ruleToRoot && op.Rank == op.Peer:
		if len(in.entries) < need {
			return 0, false
		}
		t, deps = max(t, in.last), len(in.entries)
	case rule == ruleFromRoot && op.Rank != op.Peer:
		root := in.root
		if op.Peer != in.first.Peer { // (calls that disagree on the root)
			i := slices.IndexFunc(in.entries, func(o collEntry) bool { return o.rank == int(op.Peer) })
			if i < 0 {
				return 0, false
			}
			root = in.entries[i]
		}
		if root.rank < 0 {
			return 0, false
		}
		t, deps = max(t, root.postT), 1
	case rule == rulePrefix && op.Tag > 0:
		if in.tagT != nil && int(op.Tag) <= len(in.tagT) {
			if int(op.Tag) > in.low {
				return 0, false
			}
			t, deps = max(t, in.upTo[op.Tag-1]), int(op.Tag)
			break
		}
		for _, o := range in.entries { // (a Scan among other collectives)
			if o.tag < int(op.Tag) {
				t = max(t, o.postT)
				deps++
			}
		}
		if deps < int(op.Tag) {
			return 0, false
		}
	}
	if deps > 0 {
		t += e.latency
	}
	return t, true
}

// collRule is the rule op follows in this run: every collective
// synchronizes under the sync fault (the worst case the standard allows).
func (e *Engine) collRule(op *Op) collRule {
	if e.sync {
		return ruleAll
	}
	return ruleOf(op.Kind)
}

// collSize is the number of members of call's communicator.
func collSize(call *Op, world int) int {
	if call.Count <= 0 {
		return world
	}
	return int(call.Count)
}

// collWaitsOn lists the ranks a rank blocked in collective call waits for
// (for the wait-for graph): of those its rule depends on, the ones that
// have not entered the same collective (for the world, its ranks; for
// another comm, the ranks seen using it, or every rank when the comm is as
// large as the world, as a dup of it is: then a rank that has not used it
// yet is a member all the same, and a cycle through it is a deadlock).
func (e *Engine) collWaitsOn(call *Op) []int {
	c := e.comms[int(call.Comm)]
	if c == nil {
		return nil
	}
	everyRank := call.Comm == 0 || collSize(call, len(e.ranks)) == len(e.ranks)
	in := e.collOf(call)
	entered := make([]bool, len(e.ranks))
	if in != nil {
		for _, o := range in.entries {
			entered[o.rank] = true
		}
	}
	rule := e.collRule(call)
	var out []int
	for r := range e.ranks {
		if entered[r] || (!everyRank && !c.members[r]) {
			continue
		}
		switch {
		case rule == ruleFromRoot && r != int(call.Peer):
			continue
		case rule == rulePrefix && call.Comm == 0 && r >= int(call.Tag):
			continue // (on another comm the ranks' order there is unknown: all of them)
		}
		out = append(out, r)
	}
	return out
}

// collSyncOnly reports whether call, a collective blocked in a run under
// the sync fault, waits only because sync makes it synchronize: without
// the fault the calls entered so far would let it complete.
func (e *Engine) collSyncOnly(call *Op) bool {
	if !e.sync {
		return false
	}
	in := e.collOf(call)
	if in == nil {
		return false
	}
	_, ok := e.collReady(in, call, collSize(call, len(e.ranks)), false)
	return ok
}

// mismatchProblem is the collective-mismatch of first and op, the k-th
// collective calls of their ranks on one communicator, named in rank order
// (first the lower rank, whichever entered first: the same finding in
// every replay).
func (e *Engine) mismatchProblem(first, op *Op, k uint64, why string) Problem {
	where := "the world"
	if op.Comm != 0 {
		where = fmt.Sprintf("comm %d", op.Comm)
	}
	return Problem{Kind: verdict.CollectiveMismatch, Ranks: []int{int(first.Rank), int(op.Rank)}, Ops: []*Op{first, op},
		Collective: &verdict.CollectiveCall{Comm: int(op.Comm), Call: k + 1},
		Message: fmt.Sprintf("collective call %d on %s: rank %d calls %s, rank %d calls %s: %s",
			k+1, where, first.Rank, e.describe(first), op.Rank, e.describe(op), why)}
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
	e.noteComm(int(call.Comm), rk.id)
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
	e.noteComm(int(call.Comm), rk.id)
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
	if op.Peer == trace.AnySource || (op.Peer >= 0 && int(op.Peer) < len(e.ranks)) {
		return true
	}
	op.Err = trace.ErrInvalid
	e.problem(Problem{Kind: verdict.InvalidCall, Ranks: []int{int(op.Rank)}, Ops: []*Op{op},
		Message: fmt.Sprintf("rank %d: %s from rank %d, but the world has ranks 0..%d", op.Rank, e.cfg.Names.Op(op.Kind), op.Peer, len(e.ranks)-1)})
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
	if p := dst.blockedIn; p.bits&bitDone == 0 && envelopeMatches(send, p) {
		probeStatus(p, send)
		e.complete(p, t)
	}
}

// A collective that some members of its communicator entered and the
// others finished without entering is a collective-mismatch (MPI-3.1 sec.
// 5.1: "all processes in the group ... call the collective routine"; sec.
// 8.7: MPI_Finalize is collective, so no member may make another one
// after it). Whether the members that entered went on (a Reduce's
// non-root, a Bcast's root) or hang (a Gather's root) depends on the
// collective and the library: the missing call is the bug either way, and
// under every fault the same call (its Collective names it).

// missedBy lists the members of comm id that never entered in and have
// finished (not cut short: a cut rank may have been about to enter it),
// in rank order; none when any member that did not enter is still running,
// or cut, and none once the communicator's calls disagreed (that mismatch
// is the finding: later calls no longer correspond) or in's did. The
// members of the world are its ranks; of another communicator, those
// Config.Comms lists and the ranks seen using it.
func (e *Engine) missedBy(id int, c *comm, in *collective) []int {
	if c.disagreed || in.mismatched {
		return nil
	}
	entered := make([]bool, len(e.ranks))
	for _, en := range in.entries {
		entered[en.rank] = true
	}
	var out []int
	for r := range e.ranks {
		if entered[r] || id != 0 && !c.members[r] {
			continue
		}
		rk := &e.ranks[r]
		if rk.state != stateDone || rk.cut {
			return nil
		}
		out = append(out, r)
	}
	return out
}

// missingProblem is the collective-mismatch of in, collective k of comm id,
// that the ranks missed finished without entering.
func (e *Engine) missingProblem(id int, k uint64, in *collective, missed []int) Problem {
	where := "the world"
	if id != 0 {
		where = fmt.Sprintf("comm %d", id)
	}
	var ranks []int
	for _, en := range in.entries {
		ranks = append(ranks, en.rank)
	}
	slices.Sort(ranks)
	// The calls still pending name the culprit lines; a call that completed
	// was handed back, and the first call's copy stands for them.
	ops := slices.Clone(in.pending)
	if len(ops) == 0 {
		ops = []*Op{&in.first}
	}
	return Problem{Kind: verdict.CollectiveMismatch, Ranks: slices.Sorted(slices.Values(append(slices.Clone(ranks), missed...))), Ops: ops,
		Collective: &verdict.CollectiveCall{Comm: id, Call: k + 1},
		Message: fmt.Sprintf("collective call %d on %s: %s called %s; %s finished without calling it",
			k+1, where, verdict.RankList(ranks), e.describe(&in.first), verdict.RankList(missed))}
}

// missedCollectives reports, once no rank can run, the lowest collective
// of each communicator that members entered and others finished without
// (a later one is the same missing call, shifted: the members' k-th
// calls no longer correspond).
func (e *Engine) missedCollectives() {
	if e.nCut > 0 {
		return // (a cut rank may have been about to call it)
	}
	for _, id := range slices.Sorted(maps.Keys(e.comms)) {
		c := e.comms[id]
		if len(c.waiting) == 0 {
			continue
		}
		k := slices.Min(slices.Collect(maps.Keys(c.waiting)))
		if missed := e.missedBy(id, c, c.waiting[k]); len(missed) > 0 {
			e.problem(e.missingProblem(id, k, c.waiting[k], missed))
		}
	}
}
