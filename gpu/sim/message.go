package sim

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// CommStreams is the communicator of NCCL-style stream ops: they never match MPI-style ops.
const CommStreams = -2

// NewOp starts an op of rank r at its current clock with the next sequence number.
func (e *Engine) NewOp(r int, kind trace.Op) *Op { return e.newOp(r, kind) }

// NewRequest assigns a request id to a nonblocking op and tracks it as active
// until it is waited, tested complete or freed.
func (e *Engine) NewRequest(op *Op) {
	rk := e.ranks[op.Rank]
	rk.nextReq++
	op.Req = rk.nextReq
	rk.active = append(rk.active, op)
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

func (e *Engine) postSend(op *Op, t int64) {
	if op.Peer < 0 || op.Peer >= len(e.ranks) {
		op.Err = trace.ErrInvalid
		e.problem(Problem{Kind: KindInvalid, Ranks: []int{op.Rank}, Ops: []*Op{op},
			Message: fmt.Sprintf("rank %d: %s to rank %d, but the world has ranks 0..%d", op.Rank, op.Kind, op.Peer, len(e.ranks)-1)})
		e.complete(op, t)
		return
	}
	e.noteComm(op.Comm, op.Rank)
	dst := e.ranks[op.Peer]
	switch {
	case op.Comm == CommStreams:
		// NCCL sends block the stream until the peer's recv runs: never eager.
	case op.Mode == Buffered:
		op.eager = true
	case op.Mode == Synchronous:
		// completes at the transfer's end, once the receive has started
	case op.Mode == Ready:
		if !e.recvPosted(dst, op) {
			op.Err = trace.ErrReadyNoRecv
			e.problem(Problem{Kind: KindReadyWithoutRecv, Ranks: []int{op.Rank, op.Peer}, Ops: []*Op{op},
				Message: fmt.Sprintf("rank %d: ready send (%s) to rank %d tag %d, but rank %d had not posted a matching receive", op.Rank, op.Kind, op.Peer, op.Tag, op.Peer)})
		}
		op.eager = op.Bytes <= e.eager && !e.sync
	default:
		op.eager = !e.sync && op.Bytes <= e.eager
	}
	if e.cfg.Faults != nil {
		a := e.cfg.Faults.Message(faults.Message{Src: op.Rank, Dst: op.Peer, Tag: op.Tag, Op: op.Kind.String(), Bytes: op.Bytes, Seq: op.Seq})
		op.Delay = int64(a.Delay)
		op.Dropped = a.Drop
	}
	if op.eager {
		op.snapshot = append([]byte(nil), op.Data...)
		e.complete(op, t) // eager sends complete locally
	}
	if op.Dropped {
		return
	}
	arrive := t + op.Delay
	var q []*Op
	if dst.nTransit > 0 {
		q = dst.inTransit[op.Rank]
	}
	if n := len(q); n > 0 && q[n-1].arriveT > arrive {
		// Non-overtaking: never before an earlier message of the same pair.
		// (With nothing in transit, every earlier one has arrived already.)
		arrive = q[n-1].arriveT
	}
	op.arriveT = arrive
	if arrive == t && len(q) == 0 {
		e.inPost = op
		e.deliverEnvelope(dst, op, t)
		e.inPost = nil
		return
	}
	if dst.inTransit == nil {
		dst.inTransit = map[int][]*Op{}
	}
	dst.inTransit[op.Rank] = append(q, op)
	dst.nTransit++
	e.pushOp(arrive, evArrive, op)
}

func (e *Engine) recvPosted(dst *rank, send *Op) bool {
	for _, r := range dst.posted {
		if envelopeMatches(send, r) {
			return true
		}
	}
	return false
}

// arrive handles the envelope arrival event of the oldest in-transit send of a pair.
func (e *Engine) arrive(ev *Op) {
	dst := e.ranks[ev.Peer]
	q := dst.inTransit[ev.Rank]
	op := q[0]
	copy(q, q[1:])
	q[len(q)-1] = nil
	dst.inTransit[ev.Rank] = q[:len(q)-1]
	dst.nTransit--
	e.deliverEnvelope(dst, op, e.now)
}

func (e *Engine) deliverEnvelope(dst *rank, send *Op, t int64) {
	for i, r := range dst.posted {
		if envelopeMatches(send, r) {
			dst.posted = removeAt(dst.posted, i)
			e.match(send, r, t)
			return
		}
	}
	dst.unexpected = append(dst.unexpected, send)
	e.probeArrived(dst, send, t)
}

func (e *Engine) postRecv(op *Op, t int64) {
	if op.Peer != trace.AnySource && (op.Peer < 0 || op.Peer >= len(e.ranks)) {
		op.Err = trace.ErrInvalid
		e.problem(Problem{Kind: KindInvalid, Ranks: []int{op.Rank}, Ops: []*Op{op},
			Message: fmt.Sprintf("rank %d: %s from rank %d, but the world has ranks 0..%d", op.Rank, op.Kind, op.Peer, len(e.ranks)-1)})
		e.complete(op, t)
		return
	}
	if e.scribble && op.Kind != trace.OpRecv {
		// The receive is in flight until its Wait: whatever the buffer held
		// is not the message, so a read before completion sees garbage.
		for i := range op.Data {
			op.Data[i] = 0xA5
		}
	}
	e.noteComm(op.Comm, op.Rank)
	rk := e.ranks[op.Rank]
	for i, s := range rk.unexpected {
		if envelopeMatches(s, op) {
			rk.unexpected = removeAt(rk.unexpected, i)
			e.match(s, op, t)
			return
		}
	}
	rk.posted = append(rk.posted, op)
}

// match pairs a send and a receive at virtual time t and schedules the transfer.
func (e *Engine) match(s, r *Op, t int64) {
	s.match, r.match = r, s
	s.MatchT, r.MatchT = t, t
	s.MatchRank, s.MatchSeq = r.Rank, r.Seq
	r.MatchRank, r.MatchSeq = s.Rank, s.Seq
	r.Source, r.StatusTag = s.Rank, s.Tag
	s.wildTaken = r.Peer == trace.AnySource
	if r.Dtype != trace.DtypeNone && s.Dtype != trace.DtypeNone && r.Dtype != s.Dtype {
		r.Err = trace.ErrTypeMismatch
		e.problem(Problem{Kind: KindTypeMismatch, Ranks: []int{s.Rank, r.Rank}, Ops: []*Op{s, r},
			Message: fmt.Sprintf("rank %d sent %d %s, rank %d receives %s", s.Rank, s.Count, s.Dtype, r.Rank, r.Dtype)})
	}
	if s.Comm == CommStreams && s.Count != r.Count && r.Err == trace.ErrNone {
		r.Err = trace.ErrCountMismatch
		e.problem(Problem{Kind: KindCountMismatch, Ranks: []int{s.Rank, r.Rank}, Ops: []*Op{s, r},
			Message: fmt.Sprintf("rank %d sends %d elements, rank %d receives %d: stream send and recv counts must agree", s.Rank, s.Count, r.Rank, r.Count)})
	} else if s.Bytes > r.Bytes && s.Comm != CommStreams {
		r.Err = trace.ErrTruncate
		e.problem(Problem{Kind: KindTruncation, Ranks: []int{s.Rank, r.Rank}, Ops: []*Op{s, r},
			Message: fmt.Sprintf("rank %d sent %d bytes, rank %d's receive buffer holds %d", s.Rank, s.Bytes, r.Rank, r.Bytes)})
	}
	n := min(s.Bytes, r.Bytes)
	if r.Dtype.Size() > 0 {
		r.StatusCnt = n / int64(r.Dtype.Size())
	} else {
		r.StatusCnt = n
	}
	// The receiver gets the send buffer as posted when it was copied then, or
	// when the sender is blocked in its call: its code cannot have written it.
	r.fromPost = s.eager || s.HostBlocked() || (!e.mutate && e.inPost == s)
	if s.eager {
		// The data travelled with the envelope; it lands one transfer after
		// the post. Under mutate it is written at the receive's completion,
		// the latest legal moment, so a read before Wait cannot see it.
		if !e.mutate {
			copy(r.Data, s.snapshot[:min(n, int64(len(s.snapshot)))])
			s.snapshot = nil
		}
		done := max(t, s.PostT+s.Delay+e.transferTime(s.Bytes))
		e.pushOp(done, evComplete, r)
		return
	}
	if !e.mutate {
		copyPayload(r.Data, s.Data, n) // the transfer reads the send buffer when it starts
	}
	done := t + e.transferTime(s.Bytes)
	e.pushOp(done, evComplete, r)
}

// transferDone completes a receive (and its rendezvous send) at e.now.
func (e *Engine) transferDone(r *Op) {
	s := r.match
	switch {
	case e.mutate && s.eager:
		copyPayload(r.Data, s.snapshot, min(s.Bytes, r.Bytes))
		s.snapshot = nil
	case e.mutate:
		// Latest legal moment: the send completes now, so its buffer is read now.
		copyPayload(r.Data, s.Data, min(s.Bytes, r.Bytes))
	}
	s.delivered = true
	e.complete(r, e.now)
	e.complete(s, e.now)
	if s.released {
		e.Release(s)
	}
}

// copyPayload copies n bytes of a message. A replayed trace has no payloads
// (nil buffers): then nothing is copied.
func copyPayload(dst, src []byte, n int64) {
	n = min(n, int64(len(dst)), int64(len(src)))
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
