package gpu

import (
	"fmt"
	"slices"

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

// pendingBuf is the buffer of a pending nonblocking operation: its bytes
// lo..hi of allocation alloc.
type pendingBuf struct {
	op     *sim.Op
	alloc  uint32
	lo, hi int
}

// overlapState is a rank's pending buffers and the overlaps found.
type overlapState struct {
	pending []pendingBuf // in post order; retired ones dropped lazily
	found   []bufOverlap
}

// bufOverlap is two operations of one rank whose buffers share n bytes.
type bufOverlap struct {
	a, b *sim.Op
	n    int
}

// shared is how many bytes of p both ranges hold, when one of the two ops
// writes them (0 otherwise).
func shared(a *sim.Op, aBuf pendingBuf, b *sim.Op, bBuf pendingBuf) int {
	if aBuf.alloc != bBuf.alloc || aBuf.lo >= bBuf.hi || bBuf.lo >= aBuf.hi || !(a.Kind.IsRecv() || b.Kind.IsRecv()) {
		return 0
	}
	return min(aBuf.hi, bBuf.hi) - max(aBuf.lo, bBuf.lo)
}

// pendingKinds are the ops whose buffer stays the runtime's after the call.
const pendingKinds = 1<<trace.OpIsend | 1<<trace.OpIssend | 1<<trace.OpIbsend | 1<<trace.OpIrsend | 1<<trace.OpIrecv

// noteBuffer checks the buffer of op, a message call of the rank just made,
// against the rank's pending operations; a nonblocking op becomes pending
// itself (until retired). Inlined: a blocking call with nothing pending
// costs a length test and a bit test.
func (r *Rank) noteBuffer(op *sim.Op, buf *Buffer) {
	if len(r.ovl.pending) != 0 || pendingKinds&(1<<op.Kind) != 0 {
		r.ovl.note(op, buf)
	}
}

func (s *overlapState) note(op *sim.Op, buf *Buffer) {
	p := s.pending
	for len(p) > 0 && p[len(p)-1].op.Waited() { // the usual case: a Waitall retired them all
		p[len(p)-1].op = nil
		p = p[:len(p)-1]
	}
	if len(buf.data) != 0 && op.Kind != trace.OpStreamSend && op.Kind != trace.OpStreamRecv {
		cur := pendingBuf{op: op, alloc: buf.alloc, lo: buf.off, hi: buf.off + len(buf.data)}
		for i := range p {
			if n := shared(p[i].op, p[i], op, cur); n > 0 && !p[i].op.Waited() {
				s.found = append(s.found, bufOverlap{a: p[i].op, b: op, n: n})
			}
		}
		if pendingKinds&(1<<op.Kind) != 0 {
			if len(p) == cap(p) { // drop the retired ones before growing
				p = slices.DeleteFunc(p, func(q pendingBuf) bool { return q.op.Waited() })
			}
			p = append(p, cur)
		}
	}
	s.pending = p
}

// noteSendrecv checks the two buffers of one Sendrecv against each other.
func (r *Rank) noteSendrecv(send *sim.Op, sendbuf *Buffer, recv *sim.Op, recvbuf *Buffer) {
	if sendbuf == nil || recvbuf == nil {
		return
	}
	sb := pendingBuf{alloc: sendbuf.alloc, lo: sendbuf.off, hi: sendbuf.off + len(sendbuf.data)}
	rb := pendingBuf{alloc: recvbuf.alloc, lo: recvbuf.off, hi: recvbuf.off + len(recvbuf.data)}
	if n := shared(send, sb, recv, rb); n > 0 {
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
