package gpu

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// A receive buffer belongs to the runtime from the receive's call until the
// call that retires it (Wait, Test that said done, Stream.Synchronize): a
// program that writes it meanwhile loses the write, or the message. The
// recorder hashes the buffer of each pending nonblocking receive when it is
// posted and again when the message lands, and compares at each later call
// of the rank until one retires it: a different hash is the program's write
// (only the engine writes receive buffers: when it matches the message, or
// at completion; see copiedIn).

// pendingRecv is a nonblocking receive whose buffer the recorder watches.
type pendingRecv struct {
	op   *sim.Op
	hash uint64 // the buffer as the runtime left it (at post, or at completion)
	done bool   // the message landed
	// matched: the receive had matched its message when the watch began
	// (the engine had copied it in, or copies it in at completion).
	matched bool
}

// watchRecv starts watching op's buffer, once its call has posted it (and
// the engine wrote into it the message that was already there, if any).
func (rec *recorder) watchRecv(op *sim.Op) {
	if rec.hasher.Off() || op.Data() == nil || !(op.Kind == trace.OpIrecv || op.Kind == trace.OpStreamRecv) {
		return
	}
	rec.recvs = append(rec.recvs, pendingRecv{op: op, hash: rec.hashOf(op.Data()), matched: op.Matched() != nil})
}

// recvLanded notes the buffer as the message left it.
func (rec *recorder) recvLanded(op *sim.Op) {
	for i := range rec.recvs {
		if p := &rec.recvs[i]; p.op == op {
			p.hash, p.done = rec.landedHash(op), true
			return
		}
	}
}

// landedHash is the hash of op's whole buffer once its message landed:
// sentHash's when the message fills the buffer, without a second pass.
func (rec *recorder) landedHash(op *sim.Op) uint64 {
	if h, n, ok := sentHash(op); ok && n == len(op.Data()) {
		return h
	}
	return rec.hashOf(op.Data())
}

// sentHash is the hash of the first n bytes of op's buffer once its message
// landed, when that is known without reading them: the message is the send
// buffer as it was posted (hashed then).
func sentHash(op *sim.Op) (hash uint64, n int, ok bool) {
	s := op.Matched()
	if s == nil || !op.DeliveredAtPost() || op.Err != trace.ErrNone || s.HashPost() == 0 || s.Bytes > int64(len(op.Data())) {
		return 0, 0, false
	}
	return s.HashPost(), int(s.Bytes), true
}

// checkRecvs compares the watched buffers of call's rank with what the
// runtime left in them: call is the rank's next call. Those that call
// retires stop being watched.
func (rec *recorder) checkRecvs(call *sim.Op) {
	if len(rec.recvs) == 0 {
		return
	}
	kept := rec.recvs[:0]
	for _, p := range rec.recvs {
		if p.op.Rank != call.Rank {
			kept = append(kept, p)
			continue
		}
		h := rec.hashOf(p.op.Data())
		if h != p.hash && !p.done && !p.matched && p.op.Matched() != nil && rec.copiedIn(p.op, h) {
			p.hash, p.done = h, true
		}
		if h != p.hash {
			rec.recvWrites = append(rec.recvWrites, recvWrite{recv: p.op, at: call, landed: p.done})
			continue // reported once
		}
		if retires(call, p.op) {
			continue
		}
		kept = append(kept, p)
	}
	rec.recvs = kept
}

// copiedIn reports whether a change of recv's buffer since the watch
// began, the receive matched meanwhile but not completed, may be the
// engine's: it copies a message in when it matches the receive and
// completes the receive (recvLanded) a transfer later. It is unless the
// part the message wrote differs from the message. (When the message is
// not the send buffer as posted, that is unknown: the buffer is taken as
// the message's, and a write between the match and this call goes unseen.)
// h is the hash of the whole buffer now.
func (rec *recorder) copiedIn(recv *sim.Op, h uint64) bool {
	want, n, ok := sentHash(recv)
	switch {
	case !ok:
		return true
	case n == len(recv.Data()):
		return h == want
	}
	return rec.hashOf(recv.Data()[:n]) == want
}

// retires reports whether call ends the runtime's hold on recv's buffer.
func retires(call, recv *sim.Op) bool {
	switch call.Kind {
	case trace.OpWait, trace.OpWaitall, trace.OpWaitany, trace.OpTest, trace.OpTestall, trace.OpFree:
		for _, q := range call.Reqs() {
			if q == recv {
				return call.Kind != trace.OpTest && call.Kind != trace.OpTestall || recv.Done()
			}
		}
	case trace.OpSynchronize:
		return call.Stream() == recv.Stream()
	case trace.OpFinalize:
		return true
	}
	return false
}

// recvWrite is a receive buffer the program wrote while it was pending.
type recvWrite struct {
	recv, at *sim.Op
	landed   bool
}

// recvWriteProblems reports the writes seen.
func (rec *recorder) recvWriteProblems() []sim.Problem {
	var out []sim.Problem
	for _, w := range rec.recvWrites {
		when := "before its message arrived (the message then overwrites the write)"
		if w.landed {
			when = "after its message arrived and before it was waited (the write overwrites the message)"
		}
		out = append(out, sim.Problem{Kind: verdict.RecvBufferWrite, Ranks: []int{int(w.recv.Rank)}, Ops: []*sim.Op{w.recv, w.at},
			Message: fmt.Sprintf("rank %d: the buffer of %s was written while the receive was pending, %s; noticed at its %s", w.recv.Rank, sim.Describe(w.recv), when, w.at.Kind)})
	}
	return out
}
