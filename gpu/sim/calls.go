package sim

import (
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"slices"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Block makes rank r wait in call until all (or, with any, one) of ops are
// done. It returns true when the condition already holds: the call completes
// and the rank goes on. Otherwise the rank is blocked and the driver must
// return to Next; when Next hands the rank back, the call has completed.
func (e *Engine) Block(call *Op, ops []*Op, any bool) bool {
	rk := &e.ranks[call.Rank]
	if !any {
		// A wait-all: count (and mark) the ops it still needs; none means
		// it is over.
		if e.await(rk, ops); rk.waitLeft == 0 {
			e.finishCall(call, rk.clock)
			return e.yieldIfLate(rk)
		}
		rk.wait, rk.waitOn = waitAll, ops
		rk.state = stateBlocked
		rk.blockedIn = call
		return false
	}
	rk.wait = waitAny
	rk.waitOn = ops
	if e.waitSatisfied(rk) {
		rk.wait, rk.waitOn = waitNone, nil
		e.finishCall(call, rk.clock)
		return e.yieldIfLate(rk)
	}
	rk.state = stateBlocked
	rk.blockedIn = call
	return false
}

// WaitanyAt makes the rank wait in a Waitany call over ops until ops[i] is
// done, and retires that one alone: a replay follows the request the
// recorded program got (its later calls did), whichever of ops the replay
// completes first. call.Source is i once the call completes. It returns
// like Block.
func (e *Engine) WaitanyAt(call *Op, ops []*Op, i int) bool {
	rk := &e.ranks[call.Rank]
	call.SetReqs(ops)
	call.x().anyAt = int32(i) + 1
	rk.one[0] = ops[i]
	return e.Block(call, rk.one[:], false)
}

// await counts the ops a rank blocked in a wait-all still needs, and marks
// them, so a completion unblocks it without looking at the other ops.
func (e *Engine) await(rk *rank, ops []*Op) {
	rk.waitLeft = 0
	for _, op := range ops {
		if op.bits&(bitDone|bitAwaited) == 0 {
			op.bits |= bitAwaited
			rk.waitLeft++
		}
	}
}

// BlockOn is Block on the call's own message op (a blocking Send or Recv),
// without allocating the one-element slice.
func (e *Engine) BlockOn(call *Op) bool {
	rk := &e.ranks[call.Rank]
	rk.one[0] = call
	return e.Block(call, rk.one[:], false)
}

// finishCall completes a call op whose condition holds, and fills its status.
func (e *Engine) finishCall(call *Op, t int64) {
	rk := &e.ranks[call.Rank]
	if call.Kind == trace.OpWaitany && call.ext != nil && call.ext.anyAt > 0 {
		i := int(call.ext.anyAt - 1) // WaitanyAt
		call.Source = int32(i)
		e.retire(rk, call.Reqs()[i])
	} else if call.Kind == trace.OpWaitany {
		call.Source = -1
		for i, op := range call.Reqs() {
			if op.bits&bitDone != 0 {
				call.Source = int32(i) // Waitany's index travels in Source
				e.retire(rk, op)
				break
			}
		}
	} else {
		for _, op := range call.Reqs() {
			e.retire(rk, op)
		}
	}
	e.complete(call, t)
}

// yieldIfLate queues a resume for the rank when events are due before its
// clock, so a rank never runs ahead of the rest of the world.
func (e *Engine) yieldIfLate(rk *rank) bool {
	if e.mayContinue(rk) {
		return true
	}
	rk.state = stateReady
	e.pushResume(rk.clock, rk.id)
	return false
}

// retire drops a waited op from the rank's active requests: the oldest
// (the common case: requests are mostly waited in the order made), or the
// one its id names, so a Waitall of many requests costs a constant time per
// request whatever their order (see rank.active).
func (e *Engine) retire(rk *rank, op *Op) {
	if op.bits&bitActive == 0 {
		return // no request, or retired already (line 0 alone: see Op)
	}
	op.bits &^= bitActive
	op.bits |= bitWaited
	h := rk.activeHead
	if h >= len(rk.active) || rk.active[h] != op {
		i := op.Req - rk.activeBase()
		if int(op.Rank) == rk.id && i < uint64(len(rk.active)) && rk.active[i] == op {
			rk.active[i] = nil // (else not this rank's, or cut)
		}
		return
	}
	rk.active[h] = nil
	for h++; h < len(rk.active) && rk.active[h] == nil; h++ {
	}
	if h == len(rk.active) {
		rk.active, h = rk.active[:0], 0 // none left: start over
	}
	rk.activeHead = h
}

// Test reports whether all ops are done; if so they are retired like a Wait.
// If not, it counts a fruitless poll: the rank may be parked (see Parked).
func (e *Engine) Test(call *Op, ops []*Op) bool {
	rk := &e.ranks[call.Rank]
	all := true
	for _, op := range ops {
		if op.bits&bitDone == 0 {
			all = false
		}
	}
	if all {
		for _, op := range ops {
			e.retire(rk, op)
		}
	}
	call.Flag = all
	e.complete(call, rk.clock)
	if !all {
		e.polled(rk, call, ops) // the driver asks Parked
	} else if rk.polls = 0; e.nParked != 0 {
		e.changed(rk.clock)
	}
	return all
}

// Free releases a request without completing it (MPI_Request_free).
//
// MPI-3.1 sec. 3.7.3: the request is only marked for deallocation; an
// ongoing operation goes on and completes, unseen. Freeing an active send is
// legitimate (its completion may be learned otherwise, a reply): retiring it
// leaves the message to match, deliver and complete as any other. Freeing an
// active receive or nonblocking collective is a missing Wait: nothing tells
// the program when its buffer holds the result (the standard's advice).
// Active is the handle's state, not the transfer's: a handle is active
// until a Wait or Test completes it (sec. 3.7.3, "a handle is active if it
// is neither null nor inactive"), so a receive freed before any Wait is
// reported whether or not its message had arrived, and every replay and
// recording of the program says the same (a receive whose message came
// early was reported only under delays). A request named by MPI_Cancel
// may be freed (sec. 3.8.4). call.Flag says the recording saw the request
// active when it was freed.
func (e *Engine) Free(call *Op, op *Op) {
	rk := &e.ranks[call.Rank]
	if (op.bits&bitActive != 0 || call.Flag) && op.bits&(bitFreed|bitCancelAsked) == 0 && !freeableActive(op.Kind) {
		e.problem(Problem{Kind: verdict.MissingWait, Ranks: []int{int(op.Rank)}, Ops: []*Op{op, call},
			Message: fmt.Sprintf("rank %d: request of %s freed while still active", op.Rank, e.requestOf(op))})
	}
	op.bits |= bitFreed
	e.retire(rk, op)
	e.complete(call, rk.clock)
}

// freeableActive reports whether a request of kind may be freed while
// active: a nonblocking send's (persistent sends start as these kinds).
func freeableActive(kind trace.Op) bool {
	switch kind {
	case trace.OpIsend, trace.OpIssend, trace.OpIbsend, trace.OpIrsend:
		return true
	}
	return false
}

// requestOf names the op of a request in a finding: a message by its kind,
// peer and tag; a nonblocking collective as Describe does (its Peer is a
// root or nothing, and it has no tag).
func (e *Engine) requestOf(op *Op) string {
	if op.Kind.IsCollective() {
		return e.describe(op)
	}
	return fmt.Sprintf("%s (peer %d, tag %d)", e.cfg.Names.Op(op.Kind), op.Peer, op.Tag)
}

// Compute advances rank r's clock by d ns. It returns false when the rank
// must yield to events due earlier.
func (e *Engine) Compute(call *Op, d int64) bool {
	rk := &e.ranks[call.Rank]
	rk.clock += d
	rk.computes++ // (neutral for a run of polls, see polled)
	e.complete(call, rk.clock)
	return e.yieldIfLate(rk)
}

// Hold keeps rank r, between two calls, from running for d ns, as if its
// code ran that long outside the runtime: the rest of the world goes on
// meanwhile, as far as it can without the rank. A replay holds a rank back
// this way before a receive to see whether the ready send that took it
// waits for it (see package replay's HeldPost). It returns false when the
// rank must yield to events due earlier, as Compute does.
func (e *Engine) Hold(r int, d int64) bool {
	rk := &e.ranks[r]
	rk.clock += d
	return e.yieldIfLate(rk)
}

// Finalize ends rank r: its function returned. What it left active is a missing Wait.
func (e *Engine) Finalize(call *Op) {
	rk := &e.ranks[call.Rank]
	e.complete(call, rk.clock)
	for _, op := range rk.active[rk.activeHead:] {
		if op == nil {
			continue // retired
		}
		state := "never completed"
		switch {
		case op.Cancelled():
			state = "cancelled but never waited" // (Cancel only marks it: see cancel.go)
		case op.bits&bitDone != 0:
			state = "completed but never waited"
		}
		e.problem(Problem{Kind: verdict.MissingWait, Ranks: []int{int(op.Rank)}, Ops: []*Op{op},
			Message: fmt.Sprintf("rank %d: request of %s %s before the rank finished", op.Rank, e.requestOf(op), state)})
	}
	rk.active, rk.activeHead = nil, 0
	ids := make([]int, 0, len(rk.streams))
	for id := range rk.streams {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if st := rk.streams[id]; !st.empty() {
			op := st.entries[0][0]
			e.problem(Problem{Kind: verdict.MissingWait, Ranks: []int{int(op.Rank)}, Ops: []*Op{op},
				Message: fmt.Sprintf("rank %d: stream %d still had %s (peer %d) pending when the rank finished: Synchronize the stream before using its buffers", op.Rank, st.id, e.cfg.Names.Op(op.Kind), op.Peer)})
		}
	}
	rk.state = stateDone
	e.nDone++
}

// Cut ends rank r where its record ends, in a trace cut short (the program
// or the recorder was killed, the run crashed or was stopped as hung), or
// where a live rank crashed: what
// it left pending is an effect of the cut, not a finding, and a run stuck
// without a cycle after a cut is not reported either (see Next).
func (e *Engine) Cut(r int) {
	rk := &e.ranks[r]
	rk.active, rk.activeHead = nil, 0
	rk.cut = true
	rk.state = stateDone
	e.nDone++
	e.nCut++
}

// End reports what is left once no rank can run: sends nobody received,
// complete (eager) or freed (see Free: no Wait will ever report it), and
// collectives that members finished without calling (missedCollectives).
func (e *Engine) End() {
	if !e.stuck {
		e.missedCollectives()
	}
	for i := range e.ranks {
		rk := &e.ranks[i]
		for s := range rk.unexpected.all {
			if s.bits&(bitDone|bitFreed) != 0 && !e.stuck && !rk.cut {
				e.problem(Problem{Kind: verdict.UnmatchedSend, Ranks: []int{int(s.Rank), rk.id}, Ops: []*Op{s},
					Message: fmt.Sprintf("rank %d: %s to rank %d tag %d (%d bytes) was never received", s.Rank, e.cfg.Names.Op(s.Kind), rk.id, s.Tag, s.Bytes)})
			}
		}
	}
}

// Group calls.

// GroupStart opens a group on rank r: stream ops are held until GroupEnd.
func (e *Engine) GroupStart(call *Op) {
	rk := &e.ranks[call.Rank]
	rk.groupDepth++
	e.complete(call, rk.clock)
}

// GroupEnd closes a group; at the outermost GroupEnd the held ops are enqueued
// together, one entry per stream, so they progress together.
func (e *Engine) GroupEnd(call *Op) {
	rk := &e.ranks[call.Rank]
	if rk.groupDepth == 0 {
		call.Err = trace.ErrInvalid
		e.problem(Problem{Kind: verdict.InvalidCall, Ranks: []int{int(call.Rank)}, Ops: []*Op{call}, Message: fmt.Sprintf("rank %d: GroupEnd without GroupStart", call.Rank)})
		e.complete(call, rk.clock)
		return
	}
	rk.groupDepth--
	if rk.groupDepth == 0 {
		ops := rk.groupOps
		rk.groupOps = nil
		var order []int
		by := map[int][]*Op{}
		for _, op := range ops {
			if _, ok := by[int(op.Stream())]; !ok {
				order = append(order, int(op.Stream()))
			}
			by[int(op.Stream())] = append(by[int(op.Stream())], op)
		}
		for _, id := range order {
			e.stream(rk, id).enqueue(e, by[id], rk.clock)
		}
	}
	e.complete(call, rk.clock)
}

// StreamOp enqueues a stream send or recv (op.Kind OpStreamSend/OpStreamRecv, op.Stream set).
func (e *Engine) StreamOp(op *Op) {
	rk := &e.ranks[op.Rank]
	op.Comm = CommStreams
	op.Tag = 0
	e.observePost(op)
	if op.Kind == trace.OpStreamRecv && op.Peer == trace.AnySource {
		// ncclRecv names its peer: NCCL has no wildcard (and torch's recv
		// without src fails on its NCCL backend, which has no
		// recvAnysource). The receive then goes on as a wildcard one, as
		// recorded: what follows from it is this bug, not another.
		e.problem(Problem{Kind: verdict.InvalidCall, Ranks: []int{int(op.Rank)}, Ops: []*Op{op},
			Message: fmt.Sprintf("rank %d: %s from any source: a stream (NCCL) receive names its peer; NCCL has no receive from any source", op.Rank, e.cfg.Names.Op(op.Kind))})
	}
	st := e.stream(rk, int(op.Stream()))
	op.x().stream = st
	op.bits |= bitStream
	if rk.groupDepth > 0 {
		rk.groupOps = append(rk.groupOps, op)
		return
	}
	st.enqueue(e, []*Op{op}, rk.clock)
}

// Synchronize blocks the rank until the stream is drained.
func (e *Engine) Synchronize(call *Op) bool {
	rk := &e.ranks[call.Rank]
	st := e.stream(rk, int(call.Stream()))
	if st.empty() {
		e.complete(call, rk.clock)
		return e.yieldIfLate(rk)
	}
	rk.wait = waitStream
	rk.waitSt = st
	rk.state = stateBlocked
	rk.blockedIn = call
	return false
}

func (e *Engine) stream(rk *rank, id int) *stream {
	st := rk.streams[id]
	if st == nil {
		st = &stream{rank: rk.id, id: id}
		if rk.streams == nil {
			rk.streams = map[int]*stream{}
		}
		rk.streams[id] = st
	}
	return st
}

// stream is an in-order queue of entries; an entry is one op or one group's ops.
type stream struct {
	rank, id int
	entries  [][]*Op
}

func (st *stream) empty() bool { return len(st.entries) == 0 }

func (st *stream) enqueue(e *Engine, ops []*Op, t int64) {
	for _, op := range ops {
		op.x().stream, op.bits = st, op.bits|bitStream
	}
	st.entries = append(st.entries, ops)
	if len(st.entries) == 1 {
		st.start(e, t)
	}
}

// start posts the head entry's ops at time t.
func (st *stream) start(e *Engine, t int64) {
	for _, op := range st.entries[0] {
		if op.Kind == trace.OpStreamSend {
			e.postSend(op, t)
		} else {
			e.postRecv(op, t)
		}
	}
}

func (st *stream) opDone(e *Engine, op *Op, t int64) {
	if len(st.entries) == 0 {
		return
	}
	for _, o := range st.entries[0] {
		if o.bits&bitDone == 0 {
			return
		}
	}
	st.entries = st.entries[1:]
	if len(st.entries) > 0 {
		st.start(e, t)
		return
	}
	rk := &e.ranks[st.rank]
	if rk.state == stateBlocked && rk.wait == waitStream && rk.waitSt == st {
		rk.state = stateReady
		e.pushResume(max(t, rk.clock), rk.id)
	}
}
