package gpu

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// The buffer of a pending operation belongs to the runtime until the
// operation is retired (Wait, a Test that said done, Free): a second
// operation of the rank that uses bytes of it while one of the two writes
// them (a receive) races with the runtime, whatever the order the transfers
// happen to take (the MPI standard forbids it: "buffer-overlap", the rule the
// MPI merge applies to real programs). So does a Sendrecv whose send and
// receive buffers overlap. Each message call's buffer (allocation, byte
// offset, length) is compared with the rank's pending nonblocking
// operations only, so the check costs one pass over a handful of ops. Stream
// operations are not checked: one stream runs its operations in order.

// pendingBuf is the buffer of a pending nonblocking operation.
type pendingBuf struct {
	op     *sim.Op
	alloc  uint32
	lo, hi int // byte range in the allocation
	writes bool
}

// overlapState is a rank's pending buffers and the overlaps found.
type overlapState struct {
	pending []pendingBuf
	found   []bufOverlap
}

// bufOverlap is two operations of one rank whose buffers share n bytes.
type bufOverlap struct {
	a, b *sim.Op
	n    int
}

func bufRange(op *sim.Op, buf *Buffer) pendingBuf {
	return pendingBuf{op: op, alloc: buf.alloc, lo: buf.off, hi: buf.off + len(buf.data), writes: op.Kind.IsRecv()}
}

func (p pendingBuf) shared(q pendingBuf) int {
	if p.alloc != q.alloc || !(p.writes || q.writes) {
		return 0
	}
	return max(0, min(p.hi, q.hi)-max(p.lo, q.lo))
}

// noteBuffer checks the buffer of op, a message call of the rank just made,
// against the rank's pending operations; a nonblocking op becomes pending
// itself (until retired).
func (r *Rank) noteBuffer(op *sim.Op, buf *Buffer) {
	s := &r.ovl
	if len(buf.data) == 0 || op.Kind == trace.OpStreamSend || op.Kind == trace.OpStreamRecv {
		return
	}
	cur := bufRange(op, buf)
	kept := s.pending[:0]
	for _, p := range s.pending {
		if p.op.Waited() {
			continue
		}
		kept = append(kept, p)
		if n := p.shared(cur); n > 0 {
			s.found = append(s.found, bufOverlap{a: p.op, b: op, n: n})
		}
	}
	switch op.Kind {
	case trace.OpIsend, trace.OpIssend, trace.OpIbsend, trace.OpIrsend, trace.OpIrecv:
		kept = append(kept, cur)
	}
	s.pending = kept
}

// noteSendrecv checks the two buffers of one Sendrecv against each other.
func (r *Rank) noteSendrecv(send *sim.Op, sendbuf *Buffer, recv *sim.Op, recvbuf *Buffer) {
	if sendbuf == nil || recvbuf == nil {
		return
	}
	if n := bufRange(send, sendbuf).shared(bufRange(recv, recvbuf)); n > 0 {
		r.ovl.found = append(r.ovl.found, bufOverlap{a: send, b: recv, n: n})
	}
}

// overlapProblems reports the overlaps found, one per rank and pair of call sites.
func (w *world) overlapProblems() []sim.Problem {
	var out []sim.Problem
	seen := map[[2]uintptr]bool{}
	for _, r := range w.ranks {
		clear(seen)
		for _, o := range r.ovl.found {
			key := [2]uintptr{o.a.Site, o.b.Site}
			if seen[key] {
				continue
			}
			seen[key] = true
			msg := fmt.Sprintf("rank %d: the send and receive buffers of %s overlap (%d bytes in common): the receive writes bytes the send reads",
				r.id, sim.Describe(o.a), o.n)
			if o.a.Kind != trace.OpSendrecv {
				who := "the send reads" // then o.b is the receive
				if o.a.Kind.IsRecv() {
					who = "the receive writes"
				}
				msg = fmt.Sprintf("rank %d: %s uses %d bytes of the buffer of %s while it is pending, and %s them",
					r.id, sim.Describe(o.b), o.n, sim.Describe(o.a), who)
			}
			out = append(out, sim.Problem{Kind: verdict.BufferOverlap, Ranks: []int{r.id}, Ops: []*sim.Op{o.a, o.b}, Message: msg})
		}
	}
	return out
}
