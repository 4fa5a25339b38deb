package gpu

import (
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Stream is an in-order queue of device work, NCCL style: Send and Recv are
// enqueued and return at once; the stream passes each only once the peer has
// enqueued the matching op and the transfer is done.
type Stream struct {
	r  *Rank
	id int
}

// Stream returns the rank's default stream.
func (r *Rank) Stream() *Stream { return r.def }

// NewStream creates another stream on this rank.
func (r *Rank) NewStream() *Stream {
	r.nstreams++
	return &Stream{r: r, id: r.nstreams}
}

func (s *Stream) enqueue(kind trace.Op, buf *Buffer, peer int, pc uintptr) error {
	r := s.r
	if err := r.enter(); err != nil {
		return err
	}
	op := r.msgOp(kind, buf, peer, 0, pc)
	op.SetStream(int32(s.id))
	r.w.eng.StreamOp(op)
	if r.w.rec != nil {
		r.w.rec.watchRecv(op) // after what the engine wrote at the post
	}
	return nil
}

// Send enqueues a send of buf to rank peer. The i-th send to a peer matches
// that peer's i-th recv from this rank; counts and datatypes must agree.
//
//go:noinline
func (s *Stream) Send(buf *Buffer, peer int) error {
	return s.enqueue(trace.OpStreamSend, buf, peer, callerPC())
}

// Recv enqueues a receive into buf from rank peer.
//
//go:noinline
func (s *Stream) Recv(buf *Buffer, peer int) error {
	return s.enqueue(trace.OpStreamRecv, buf, peer, callerPC())
}

// Synchronize blocks the host until every op enqueued on the stream is done.
//
//go:noinline
func (s *Stream) Synchronize() error {
	r := s.r
	if err := r.enter(); err != nil {
		return err
	}
	call := r.w.eng.NewOp(r.id, trace.OpSynchronize)
	call.Site = callerPC()
	r.last.Store(call)
	call.SetStream(int32(s.id))
	r.w.eng.Post(call)
	if !r.w.eng.Synchronize(call) {
		return r.pause(call)
	}
	return nil
}

// GroupStart begins a group: stream ops enqueued until the matching GroupEnd
// progress together, so simultaneous exchanges do not deadlock.
//
//go:noinline
func (r *Rank) GroupStart() error {
	if err := r.enter(); err != nil {
		return err
	}
	call := r.w.eng.NewOp(r.id, trace.OpGroupStart)
	call.Site = callerPC()
	r.last.Store(call)
	r.w.eng.Post(call)
	r.w.eng.GroupStart(call)
	return nil
}

// GroupEnd ends a group and enqueues its ops.
//
//go:noinline
func (r *Rank) GroupEnd() error {
	if err := r.enter(); err != nil {
		return err
	}
	call := r.w.eng.NewOp(r.id, trace.OpGroupEnd)
	call.Site = callerPC()
	r.last.Store(call)
	r.w.eng.Post(call)
	r.w.eng.GroupEnd(call)
	if call.Err != trace.ErrNone {
		return opError(call)
	}
	return nil
}
