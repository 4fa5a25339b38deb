package sim

import (
	"fmt"
	"slices"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// The attached buffer of buffered sends (MPI-3.1 sec. 3.4 and 3.6, "Buffer
// Allocation and Usage").
//
// A rank attaches space for its buffered sends (BufferAttach) and takes it
// back (BufferDetach); one buffer at a time: a second attach before the
// detach is an invalid call. Each buffered message (Bsend, Ibsend, a
// started Bsend_init: Mode Buffered) needs its bytes plus the overhead
// (MPI_BSEND_OVERHEAD; Config.BsendOverhead) of that space from its post
// until it is transmitted: until its transfer to the receive that took it
// is done (transferDone), or a Cancel withdrew it. A message never
// received holds its space for ever. A buffered send whose need does not fit beside the messages still
// held is a BsendBuffer finding; its message is sent all the same, holding
// nothing, so that what follows is judged as it ran. A detach blocks its
// rank until every buffered message of the rank is transmitted: a detach
// no receive can release is a hang whose wait-for edges go to the
// receivers.
//
// The check is the sum, not the standard's circular allocation: the
// standard only promises that messages fit when the space is managed as a
// circular contiguous buffer, and an implementation may give more (Open MPI
// does), so a send that overflows the circular policy may still be legal
// there. A send whose need exceeds the free space of the sum overflows
// under every policy: only that is certainly erroneous, and only that is
// reported.
//
// Which ranks are checked: with Config.BsendOverhead set (an MPI trace that
// records attaches), every rank from its start, so a buffered send with no
// buffer attached is a finding; otherwise a rank once it first attaches (a
// gpu program, or a trace from before attaches were recorded, is judged as
// before until it attaches).

// bsendRank is one rank's attached space.
type bsendRank struct {
	on       bool  // the rank's buffered sends are checked
	attach   *Op   // the attach in effect (nil: none)
	size     int64 // its bytes
	held     int64 // bytes the messages of pending hold
	detached bool  // the rank detached a buffer since its last attach (for the message)
	// pending are the rank's buffered messages not yet transmitted, each as
	// a stand-in op (a copy of the send's envelope: match is the send,
	// StatusCnt the bytes it holds); a detach waits for them.
	pending []*Op
}

// bsendState is the engine's attached-space bookkeeping, made by the
// first attach (or by New for Config.BsendOverhead): nil costs the hot
// paths one test.
type bsendState struct {
	overhead int64
	ranks    []bsendRank
}

// bsendOn makes the bookkeeping (once) and returns it.
func (e *Engine) bsendOn() *bsendState {
	if e.bsend == nil {
		e.bsend = &bsendState{overhead: e.cfg.BsendOverhead, ranks: make([]bsendRank, len(e.ranks))}
		if e.cfg.BsendOverhead > 0 {
			for i := range e.bsend.ranks {
				e.bsend.ranks[i].on = true
			}
		}
	}
	return e.bsend
}

// BufferAttach is call, an MPI_Buffer_attach of call.Bytes bytes by rank
// call.Rank, at the rank's clock. It never blocks. A second attach before
// a detach is an invalid call and changes nothing.
func (e *Engine) BufferAttach(call *Op) {
	rk := &e.ranks[call.Rank]
	e.observePost(call)
	b := &e.bsendOn().ranks[call.Rank]
	b.on = true
	if b.attach != nil {
		call.Err = trace.ErrInvalid
		e.problem(Problem{Kind: verdict.InvalidCall, Ranks: []int{int(call.Rank)}, Ops: []*Op{call, b.attach},
			Message: fmt.Sprintf("rank %d: Buffer_attach of %d bytes while the buffer of %d bytes it attached before is still attached (one buffer per process: detach it first)", call.Rank, call.Bytes, b.size)})
	} else {
		b.attach, b.size, b.detached = call, max(call.Bytes, 0), false
	}
	e.complete(call, rk.clock)
}

// BufferDetach is call, an MPI_Buffer_detach of rank call.Rank: the rank
// has no buffer from now on, and the call returns once every buffered
// message of the rank is transmitted. It returns like Block. Detaching
// with no buffer attached changes nothing and returns at once.
func (e *Engine) BufferDetach(call *Op) bool {
	e.observePost(call)
	b := &e.bsendOn().ranks[call.Rank]
	b.on = true
	if b.attach != nil {
		call.Bytes = b.size // what the detach hands back
		b.attach, b.size, b.detached = nil, 0, true
	}
	return e.Block(call, slices.Clone(b.pending), false) // (a copy: deliveries remove from pending)
}

// bsendPost accounts the buffered send op at its post: it holds its need
// until transmitted, or it is a finding if that does not fit.
func (e *Engine) bsendPost(op *Op) {
	bs := e.bsend
	b := &bs.ranks[op.Rank]
	if !b.on {
		return
	}
	need := max(op.Bytes, 0) + bs.overhead
	if b.attach == nil || b.held+need > b.size {
		e.problem(Problem{Kind: verdict.BsendBuffer, Ranks: []int{int(op.Rank)}, Ops: e.bsendCulprits(op, b), Message: e.bsendMessage(op, b, need)})
		return
	}
	b.held += need
	sh := &Op{Rank: op.Rank, Peer: op.Peer, Tag: op.Tag, Comm: op.Comm, Bytes: op.Bytes, PostT: op.PostT, Kind: op.Kind, Mode: Buffered,
		Seq: op.Seq, Site: op.Site, MatchRank: trace.NoRank, Source: trace.NoRank, StatusCnt: need, match: op}
	b.pending = append(b.pending, sh)
}

// bsendCulprits are the ops a BsendBuffer finding names: the send, and the
// attach in effect if any.
func (e *Engine) bsendCulprits(op *Op, b *bsendRank) []*Op {
	if b.attach == nil {
		return []*Op{op}
	}
	return []*Op{op, b.attach}
}

// bsendMessage says why op does not fit.
func (e *Engine) bsendMessage(op *Op, b *bsendRank, need int64) string {
	head := fmt.Sprintf("rank %d: %s needs %d bytes of buffer space (%d + MPI_BSEND_OVERHEAD %d)", op.Rank, e.describe(op), need, max(op.Bytes, 0), e.bsend.overhead)
	switch {
	case b.attach == nil && b.detached:
		return head + ", but its buffer was detached: no buffer attached"
	case b.attach == nil:
		return head + ": no buffer attached"
	}
	return fmt.Sprintf("%s, but %d of the %d bytes its Buffer_attach attached are free: %d buffered message(s) not yet transmitted hold %d",
		head, b.size-b.held, b.size, len(b.pending), b.held)
}

// bsendFreed frees the space of buffered send s, whose transfer is done
// (or which a Cancel withdrew), and releases a detach that waited for it
// last. The stand-in op
// completes without the Observer: it is no call of the program.
func (e *Engine) bsendFreed(s *Op) {
	b := &e.bsend.ranks[s.Rank]
	for i, sh := range b.pending {
		if sh.match != s {
			continue
		}
		b.held -= sh.StatusCnt
		b.pending = removeAt(b.pending, i)
		sh.bits |= bitDone
		sh.DoneT = e.now
		if sh.bits&bitAwaited != 0 {
			sh.bits &^= bitAwaited
			rk := &e.ranks[sh.Rank]
			if rk.waitLeft--; rk.waitLeft == 0 {
				e.wake(rk, e.now)
			}
		}
		return
	}
}
