package sim

import (
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// CommStreams is the communicator of NCCL-style stream ops: they never match MPI-style ops.
const CommStreams = -2

// NewOp starts an op of rank r at its current clock with the next sequence number.
func (e *Engine) NewOp(r int, kind trace.Op) *Op { return e.newOp(r, kind) }

// NewRequest assigns a request id to a new nonblocking op and tracks it as
// active until it is waited, tested complete or freed.
func (e *Engine) NewRequest(op *Op) {
	rk := &e.ranks[op.Rank]
	rk.nextReq++
	op.Req = rk.nextReq
	op.bits |= bitActive
	if len(rk.active) == cap(rk.active) && 2*rk.activeHead > len(rk.active) {
		rk.compactActive()
	}
	rk.active = append(rk.active, op)
}

// compactActive moves the requests not retired to the front of a full
// active list that is mostly retired, instead of growing it: so a rank
// whose requests never all retire at once does not grow the list forever.
// (Here, not in retire: requests are mostly waited in the order made, all
// of them, and then the list starts over without a move.)
func (rk *rank) compactActive() {
	n := copy(rk.active, rk.active[rk.activeHead:])
	clear(rk.active[n:])
	rk.active, rk.activeHead = rk.active[:n], 0
}

// PostSend posts a send op at the rank's clock. It never blocks; a blocking
// send is a PostSend followed by Block.
func (e *Engine) PostSend(op *Op) {
	e.observePost(op)
	e.postSend(op, op.PostT)
}

// PostRecv posts a receive op at the rank's clock.
func (e *Engine) PostRecv(op *Op) {
	e.observePost(op)
	e.postRecv(op, op.PostT)
}

// Post records a call that moves no message (Compute, GroupStart, ...).
func (e *Engine) Post(op *Op) { e.observePost(op) }

func (e *Engine) transferTime(bytes int64) int64 {
	if bytes != e.lastBytes || e.lastCost == 0 {
		e.lastBytes, e.lastCost = bytes, e.latency+int64(float64(bytes)/e.bw*1e9)
	}
	return e.lastCost
}

// notePayload notes, in line 0, a message op posted without a buffer (see
// bitNoData): its match and release then need not read Data.
func (op *Op) notePayload() {
	if op.Data() == nil {
		op.bits |= bitNoData
	}
}

// negativeCount fails message op, whose count (or size) is negative, as
// an invalid call that completes at t. MPI-3.1 sec. 3.2.2 and 3.2.4: a
// count is a non-negative integer (MPI_ERR_COUNT); the call's parameters
// are checked before its peer, so MPI_PROC_NULL is no exception.
func (e *Engine) negativeCount(op *Op, t int64) {
	op.Err = trace.ErrInvalid
	e.problem(Problem{Kind: verdict.InvalidCall, Ranks: []int{int(op.Rank)}, Ops: []*Op{op},
		Message: fmt.Sprintf("rank %d: %s: a count is never negative", op.Rank, e.describe(op))})
	e.complete(op, t)
}

func (e *Engine) postSend(op *Op, t int64) {
	op.notePayload()
	if op.Count|op.Bytes < 0 { // either negative: one test, inline
		e.negativeCount(op, t)
		return
	}
	if op.Peer == trace.ProcNull {
		e.complete(op, t)
		return
	}
	if op.Peer < 0 || int(op.Peer) >= len(e.ranks) {
		op.Err = trace.ErrInvalid
		e.problem(Problem{Kind: verdict.InvalidCall, Ranks: []int{int(op.Rank)}, Ops: []*Op{op},
			Message: fmt.Sprintf("rank %d: %s to rank %d, but the world has ranks 0..%d", op.Rank, e.cfg.Names.Op(op.Kind), op.Peer, len(e.ranks)-1)})
		e.complete(op, t)
		return
	}
	e.noteComm(int(op.Comm), int(op.Rank))
	dst := &e.ranks[op.Peer]
	switch {
	case op.Comm == CommStreams:
		// NCCL sends block the stream until the peer's recv runs: never eager.
	case op.Mode == Buffered:
		op.bits |= bitEager
		if e.bsend != nil {
			e.bsendPost(op) // bsend.go
		}
	case op.Mode == Synchronous:
		// completes at the transfer's end, once the receive has started
	case op.Mode == Ready:
		if !e.recvPosted(dst, op) {
			op.Err = trace.ErrReadyNoRecv
			e.problem(Problem{Kind: verdict.ReadyWithoutRecv, Ranks: []int{int(op.Rank), int(op.Peer)}, Ops: []*Op{op},
				Message: fmt.Sprintf("rank %d: ready send (%s) to rank %d tag %d, but rank %d had not posted a matching receive", op.Rank, e.cfg.Names.Op(op.Kind), op.Peer, op.Tag, op.Peer)})
		}
		op.set(bitEager, op.Bytes <= e.eager && !e.sync)
	default:
		op.set(bitEager, !e.sync && op.Bytes <= e.eager)
	}
	var delay int64
	if e.cfg.Faults != nil {
		a := e.cfg.Faults.Message(faults.Message{Src: int(op.Rank), Dst: int(op.Peer), Tag: int(op.Tag), Op: op.Kind.String(), Bytes: op.Bytes, Seq: op.Seq})
		delay = int64(a.Delay)
		op.Dropped = a.Drop
		if delay != 0 {
			op.x().delay = delay
			op.bits |= bitDelay
		}
	}
	if op.bits&bitEager != 0 {
		e.keepSnapshot(op)
		e.complete(op, t) // eager sends complete locally
	}
	if op.Dropped {
		return
	}
	arrive := t + delay
	var q *transit
	if dst.nTransit > 0 {
		q = dst.inTransit[int(op.Rank)]
	}
	if q != nil && !q.empty() && q.last > arrive {
		// Non-overtaking: never before an earlier message of the same pair.
		// (With nothing in transit, every earlier one has arrived already.)
		arrive = q.last
	}
	if arrive == t && (q == nil || q.empty()) {
		e.inPost = op
		e.deliverEnvelope(dst, op, t)
		e.inPost = nil
		return
	}
	if q == nil {
		if dst.inTransit == nil {
			dst.inTransit = map[int]*transit{}
		}
		q = &transit{}
		dst.inTransit[int(op.Rank)] = q
	}
	q.push(op)
	q.last = arrive
	dst.nTransit++
	e.pushOp(arrive, evArrive, op)
}

// transit holds the sends of one pair whose envelopes are on their way, in
// post order (ops[head:]), and when the last of them arrives.
type transit struct {
	ops  []*Op
	head int
	last int64
}

func (q *transit) empty() bool { return q.head == len(q.ops) }

// push appends op. The sends already gone make room first, so that a pair
// that always has one on its way does not grow the slice forever.
func (q *transit) push(op *Op) {
	if q.head > 0 && len(q.ops) == cap(q.ops) {
		n := copy(q.ops, q.ops[q.head:])
		clear(q.ops[n:])
		q.ops, q.head = q.ops[:n], 0
	}
	q.ops = append(q.ops, op)
}

// pop removes the oldest send; q must not be empty.
func (q *transit) pop() *Op {
	op := q.ops[q.head]
	q.ops[q.head] = nil
	if q.head++; q.head == len(q.ops) {
		q.ops, q.head = q.ops[:0], 0
	}
	return op
}

// keepSnapshot copies the payload of an eager send as it is at the post.
func (e *Engine) keepSnapshot(op *Op) {
	if len(op.Data()) == 0 {
		return // a replay without payloads: nothing to copy
	}
	c := append([]byte(nil), op.Data()...)
	if n := len(e.freeSnaps); n > 0 {
		op.ext.snap = e.freeSnaps[n-1]
		e.freeSnaps = e.freeSnaps[:n-1]
		e.snaps[op.ext.snap-1] = c
		return
	}
	e.snaps = append(e.snaps, c)
	op.ext.snap = int32(len(e.snaps))
}

// snapshot returns the eager copy of op's payload (nil if none).
func (e *Engine) snapshot(op *Op) []byte {
	if op.ext == nil || op.ext.snap == 0 {
		return nil
	}
	return e.snaps[op.ext.snap-1]
}

// dropSnapshot lets the eager copy of op's payload go.
func (e *Engine) dropSnapshot(op *Op) {
	if op.ext == nil || op.ext.snap == 0 {
		return
	}
	e.snaps[op.ext.snap-1] = nil
	e.freeSnaps = append(e.freeSnaps, op.ext.snap)
	op.ext.snap = 0
}

// arrive handles the envelope arrival event of the oldest in-transit send of a pair.
func (e *Engine) arrive(ev *Op) {
	dst := &e.ranks[ev.Peer]
	op := dst.inTransit[int(ev.Rank)].pop()
	dst.nTransit--
	if op.Flag && e.arrivedWithdrawn(op) {
		return // cancelled on its way (cancel.go)
	}
	e.deliverEnvelope(dst, op, e.now)
}

// deliverEnvelope matches send, whose envelope reaches dst at t, with the
// earliest posted receive that accepts it, or files it as unexpected. (The
// scans of short queues are inline here and in postRecv: a ring's two
// queues hold a message or none, see matchQueue.)
func (e *Engine) deliverEnvelope(dst *rank, send *Op, t int64) {
	q := &dst.posted
	for i, r := range q.list { // (empty while indexed)
		if envelopeMatches(send, r) {
			q.list = removeAt(q.list, i)
			e.match(send, r, t)
			return
		}
	}
	if q.ix != nil {
		if r := e.takePosted(q, send); r != nil {
			e.match(send, r, t)
			return
		}
	}
	if q, n := &dst.unexpected, len(dst.unexpected.list); n < cap(q.list) {
		q.list = q.list[:n+1]
		q.list[n] = send
	} else {
		e.file(q, send, false)
	}
	e.probeArrived(dst, send, t)
}

func (e *Engine) postRecv(op *Op, t int64) {
	op.notePayload()
	if op.Count|op.Bytes < 0 {
		e.negativeCount(op, t)
		return
	}
	if op.Peer == trace.ProcNull {
		op.Source = trace.ProcNull
		e.complete(op, t)
		return
	}
	if op.Peer != trace.AnySource && (op.Peer < 0 || int(op.Peer) >= len(e.ranks)) {
		op.Err = trace.ErrInvalid
		e.problem(Problem{Kind: verdict.InvalidCall, Ranks: []int{int(op.Rank)}, Ops: []*Op{op},
			Message: fmt.Sprintf("rank %d: %s from rank %d, but the world has ranks 0..%d", op.Rank, e.cfg.Names.Op(op.Kind), op.Peer, len(e.ranks)-1)})
		e.complete(op, t)
		return
	}
	if e.scribble && op.Kind != trace.OpRecv {
		// The receive is in flight until its Wait: whatever the buffer held
		// is not the message, so a read before completion sees garbage.
		for i, b := 0, op.Data(); i < len(b); i++ {
			b[i] = 0xA5
		}
	}
	e.noteComm(int(op.Comm), int(op.Rank))
	rk := &e.ranks[op.Rank]
	q := &rk.unexpected
	for i, s := range q.list { // (empty while indexed)
		if envelopeMatches(s, op) {
			q.list = removeAt(q.list, i)
			e.match(s, op, t)
			return
		}
	}
	if q.ix != nil {
		if s := e.takeUnexpected(q, op); s != nil {
			e.match(s, op, t)
			return
		}
	}
	if q, n := &rk.posted, len(rk.posted.list); n < cap(q.list) {
		q.list = q.list[:n+1]
		q.list[n] = op
	} else {
		e.file(q, op, true)
	}
}

// noteMatchT keeps t as op's match time (MatchT) for an Observer; without
// one nothing reads it, and an op keeps no opExt for it.
func (e *Engine) noteMatchT(op *Op, t int64) {
	if e.cfg.Observer != nil {
		op.x().matchT = t
	}
}

// match pairs a send and a receive at virtual time t and schedules the transfer.
func (e *Engine) match(s, r *Op, t int64) {
	s.match, r.match = r, s
	e.noteMatchT(s, t)
	e.noteMatchT(r, t)
	s.MatchRank, s.MatchSeq = r.Rank, r.Seq
	r.MatchRank, r.MatchSeq = s.Rank, s.Seq
	r.Source, r.StatusTag = s.Rank, s.Tag
	s.set(bitWildTaken, r.Peer == trace.AnySource)
	if r.Peer == trace.AnySource {
		e.noteWild(s, r)
	}
	if r.Dtype != trace.DtypeNone && s.Dtype != trace.DtypeNone && r.Dtype != s.Dtype {
		r.Err = trace.ErrTypeMismatch
		e.problem(Problem{Kind: verdict.TypeMismatch, Ranks: []int{int(s.Rank), int(r.Rank)}, Ops: []*Op{s, r},
			Message: fmt.Sprintf("rank %d sent %d %s, rank %d receives %s", s.Rank, s.Count, s.Dtype, r.Rank, r.Dtype)})
	}
	if s.Comm == CommStreams && s.Count != r.Count && r.Err == trace.ErrNone {
		r.Err = trace.ErrCountMismatch
		e.problem(Problem{Kind: verdict.CountMismatch, Ranks: []int{int(s.Rank), int(r.Rank)}, Ops: []*Op{s, r},
			Message: fmt.Sprintf("rank %d sends %d elements, rank %d receives %d: stream send and recv counts must agree", s.Rank, s.Count, r.Rank, r.Count)})
	} else if s.Bytes > r.Bytes && s.Comm != CommStreams {
		r.Err = trace.ErrTruncate
		e.problem(Problem{Kind: verdict.Truncation, Ranks: []int{int(s.Rank), int(r.Rank)}, Ops: []*Op{s, r},
			Message: fmt.Sprintf("rank %d sent %d bytes, rank %d's receive buffer holds %d", s.Rank, s.Bytes, r.Rank, r.Bytes)})
	}
	n := min(s.Bytes, r.Bytes)
	switch size := int64(r.Dtype.Size()); size {
	case 0, 1:
		r.StatusCnt = n // (no division: a 64-bit one costs tens of cycles)
	default:
		r.StatusCnt = n / size
	}
	// The receiver gets the send buffer as posted when it was copied then, or
	// when the sender is blocked in its call: its code cannot have written it.
	if s.bits&bitEager != 0 || s.HostBlocked() || (!e.mutate && e.inPost == s) {
		r.bits |= bitFromPost
	}
	// (What follows reads lines 0 and 1 of s and r alone, unless they carry
	// a payload or a delay: see Op.)
	if s.bits&bitEager != 0 {
		// The data travelled with the envelope; it lands one transfer after
		// the post. Under mutate it is written at the receive's completion,
		// the latest legal moment, so a read before Wait cannot see it.
		if !e.mutate && s.bits&bitNoData == 0 { // (else there is no eager copy)
			copyPayload(r.Data(), e.snapshot(s), n)
			e.dropSnapshot(s)
		}
		// An eager send completed at its post: its DoneT is its PostT.
		done := s.DoneT + e.transferTime(s.Bytes)
		if s.bits&bitDelay != 0 {
			done += s.Delay()
		}
		e.pushOp(max(t, done), evComplete, r)
		return
	}
	if !e.mutate && (s.bits|r.bits)&bitNoData == 0 {
		copyPayload(r.Data(), s.Data(), n) // the transfer reads the send buffer when it starts
	}
	done := t + e.transferTime(s.Bytes)
	e.pushOp(done, evComplete, r)
}

// transferDone completes a receive (and its rendezvous send) at e.now.
func (e *Engine) transferDone(r *Op) {
	s := r.match
	switch {
	case e.mutate && s.bits&bitEager != 0:
		copyPayload(r.Data(), e.snapshot(s), min(s.Bytes, r.Bytes))
		e.dropSnapshot(s)
	case e.mutate:
		// Latest legal moment: the send completes now, so its buffer is read now.
		copyPayload(r.Data(), s.Data(), min(s.Bytes, r.Bytes))
	}
	s.bits |= bitDelivered
	if e.bsend != nil && s.Mode == Buffered {
		e.bsendFreed(s) // bsend.go
	}
	e.complete(r, e.now)
	e.complete(s, e.now)
	if s.bits&bitReleased != 0 {
		e.Release(s)
	}
}

// copyPayload copies n bytes of a message. A replayed trace has no payloads
// (nil buffers): then nothing is copied.
// A size below zero (a damaged or erroneous trace) copies nothing.
func copyPayload(dst, src []byte, n int64) {
	n = min(n, int64(len(dst)), int64(len(src)))
	if n <= 0 {
		return
	}
	copy(dst[:n], src[:n])
}

// removeAt deletes s[i], keeping the order. A loop rather than copy: these
// queues are short, and copying pointers is a runtime call.
func removeAt(s []*Op, i int) []*Op {
	n := len(s) - 1
	for ; i < n; i++ {
		s[i] = s[i+1]
	}
	s[n] = nil
	return s[:n]
}
