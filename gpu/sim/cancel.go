package sim

import "github.com/p2ptrace/p2ptrace/recorder/trace"

// Cancellation of pending nonblocking ops (MPI_Cancel, MPI 4.0 sec. 3.8.4).
//
// Cancel marks a pending op for cancellation. The cancellation succeeds only
// while the op has not been matched: a receive no send has matched yet, a
// send whose message no receive has taken yet (on its way, or waiting in the
// receiver's unexpected queue). Then the op leaves the matching queues and
// completes at the cancel's time, cancelled (Cancelled): it moves no
// message, its status names no source or tag, and a receive posted later,
// or a send arriving later, never matches it. Otherwise the cancel does
// nothing and the op completes normally. Never both.
//
// Either way the request is still the program's to complete (Wait, Test,
// Free): a cancelled op is done, so a Wait on it returns at once, and one
// never completed is a missing Wait at Finalize as any other.

// Cancelled reports whether op, a message op, was cancelled (see Cancel): it
// completed without matching. (A message op's Flag says so: it has no Test
// result of its own.)
func (op *Op) Cancelled() bool { return op.Flag && (op.Kind.IsSend() || op.Kind.IsRecv()) }

// Cancel is call, an MPI_Cancel of rank call.Rank, on op, one of its
// pending nonblocking message ops, at the rank's clock. It never blocks.
// Whether it took, op.Cancelled says once op is done. Cancelling an op
// already done, matched, or cancelled before, changes nothing.
func (e *Engine) Cancel(call *Op, op *Op) {
	rk := &e.ranks[call.Rank]
	t := rk.clock
	if op.Rank == call.Rank {
		op.bits |= bitCancelAsked // (a Free may follow: MPI-3.1 sec. 3.8.4)
	}
	if !op.Cancelled() && op.match == nil && op.Rank == call.Rank {
		switch {
		case op.Kind.IsRecv() && op.bits&(bitDone|bitStream) == 0:
			if e.withdrawRecv(rk, op) {
				e.cancelled(op, t)
			}
		case op.Kind.IsSend() && op.bits&bitStream == 0 && !op.Dropped && op.Peer >= 0 && int(op.Peer) < len(e.ranks):
			if e.withdrawSend(&e.ranks[op.Peer], op) {
				e.cancelled(op, t)
				if e.bsend != nil && op.Mode == Buffered {
					e.bsendFreed(op) // its buffer space too (bsend.go)
				}
			}
		}
	}
	e.complete(call, t)
}

// cancelled completes op as cancelled at t. A send completed already
// (eager: locally, at its post) is withdrawn all the same: its message
// never reaches a receive; its completion time stays.
func (e *Engine) cancelled(op *Op, t int64) {
	op.Flag = true
	op.Source, op.StatusTag, op.StatusCnt = trace.NoRank, trace.AnyTag, 0
	e.dropSnapshot(op)
	e.complete(op, t)
}

// withdrawRecv takes op, a receive of rk not yet matched, out of rk's
// posted queue; false if it is not there (a receive that failed at its
// post, as an invalid one, is done and not there either).
func (e *Engine) withdrawRecv(rk *rank, op *Op) bool {
	return e.withdraw(&rk.posted, op, recvKey)
}

// withdrawSend takes op, a send to dst whose message no receive took, out
// of dst's unexpected queue, or marks it withdrawn while its envelope is
// on its way (the arrival skips it: see arrivedWithdrawn); false if it was
// taken already.
func (e *Engine) withdrawSend(dst *rank, op *Op) bool {
	if e.withdraw(&dst.unexpected, op, sendKey) {
		op.bits |= bitDelivered // nothing refers to it any more: Release may recycle it
		return true
	}
	if dst.nTransit > 0 {
		if q := dst.inTransit[int(op.Rank)]; q != nil {
			for _, s := range q.ops[q.head:] {
				if s == op {
					return true // (the transit queue holds it until its arrival)
				}
			}
		}
	}
	return false
}

// arrivedWithdrawn is the arrival of the envelope of send op: true when a
// Cancel withdrew it on its way, and then the arrival is all there is to it.
func (e *Engine) arrivedWithdrawn(op *Op) bool {
	if !op.Cancelled() {
		return false
	}
	op.bits |= bitDelivered
	if op.bits&bitReleased != 0 {
		e.Release(op)
	}
	return true
}

// withdraw removes op from q, wherever it is in the queue; key is how q
// files its entries (recvKey, sendKey). Matching only ever takes the head
// of a key's FIFO (matchIndex.take); a cancel may take any entry. It finds
// the entry by a walk of the queue: cancels are rare, and the hot paths
// pay nothing for them.
func (e *Engine) withdraw(q *matchQueue, op *Op, key func(*Op) envKey) bool {
	if q.ix == nil {
		for i, o := range q.list {
			if o == op {
				q.list = removeAt(q.list, i)
				return true
			}
		}
		return false
	}
	ix := q.ix
	id := ix.first
	for id != 0 && ix.nodes[id].op != op {
		id = ix.nodes[id].next
	}
	if id == 0 {
		return false
	}
	// Unlink it from its key's FIFO, then let take unlink it from the
	// queue's order: take sets the FIFO's head to the node's keyNext, so
	// that is the head as it must be.
	k := key(op)
	f := ix.lookup(k)
	if f.head != id {
		prev := f.head
		for ix.nodes[prev].keyNext != id {
			prev = ix.nodes[prev].keyNext
		}
		ix.nodes[prev].keyNext = ix.nodes[id].keyNext
		if f.tail == id {
			f.tail = prev
		}
		ix.nodes[id].keyNext = f.head
	}
	e.takeIndexed(q, found{id, f, k})
	return true
}
