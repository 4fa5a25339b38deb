package gpu

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Wildcards for Recv and Irecv.
const (
	AnySource = trace.AnySource
	AnyTag    = trace.AnyTag
)

const opFinalize = trace.OpFinalize

// Status describes a completed receive.
type Status struct {
	Source int // the rank the message came from
	Tag    int
	Count  int // elements received
	// Cancelled: the request's Cancel took (MPI_Test_cancelled); nothing
	// was received, Source and Tag name no message.
	Cancelled bool
}

// Rank is one rank of a Launch: the handle user code calls the runtime through.
// A Rank must only be used by the goroutine Launch started for it.
type Rank struct {
	w        *world
	id       int
	wake     chan struct{}
	allocs   uint32
	def      *Stream
	nstreams int
	exited   bool
	// last is the rank's latest runtime call: the watchdog's report, a
	// crash and a rank's own error name it (read from Launch's goroutine:
	// only fields set before the Store).
	last atomic.Pointer[sim.Op]
	// panicAt is the file:line where the rank's function panicked.
	panicAt string
	ovl     overlapState // pending buffers (overlap.go)
}

// ID is this rank's number, 0..Size()-1.
func (r *Rank) ID() int { return r.id }

// Size is the number of ranks.
func (r *Rank) Size() int { return len(r.w.ranks) }

// Now is this rank's virtual clock since the start of the run.
func (r *Rank) Now() time.Duration { return time.Duration(r.w.eng.Clock(r.id)) }

// Request is a pending nonblocking operation.
type Request struct {
	r  *Rank
	op *sim.Op
}

// Done reports whether the operation has completed (it does not retire the request; Wait or Test does).
func (q *Request) Done() bool { return q != nil && q.op.Done() }

// enter starts a runtime call: it counts progress and refuses calls on a stuck run.
func (r *Rank) enter() error {
	if r.w.aborted.Load() {
		r.w.stuck = true // (this goroutine holds the CPU: it may write)
	}
	if r.w.stuck {
		// Not progress: a rank that goes on calling after its calls failed
		// (errors ignored) spins, and the watchdog must see it.
		return fmt.Errorf("%w (rank %d)", ErrStuck, r.id)
	}
	r.w.progress.Add(1)
	return nil
}

// pause hands control back to the engine; it returns once the rank runs again.
func (r *Rank) pause(call *sim.Op) error {
	r.w.schedule(r)
	if r.w.stuck && !call.Done() {
		return fmt.Errorf("%w: rank %d blocked in %s%s", ErrStuck, r.id, sim.Describe(call), r.w.sites.at(call.Site))
	}
	return nil
}

// polled follows a poll that found nothing: if the engine parked the rank
// (it polled DefaultPollLimit times while nothing changed), it waits for the
// world to change; if nothing can, the run is stuck and the poll fails.
func (r *Rank) polled(call *sim.Op) error {
	if !r.w.eng.Parked(r.id) {
		return nil
	}
	r.w.schedule(r)
	if r.w.stuck {
		return fmt.Errorf("%w: rank %d polls in %s%s and no rank can progress", ErrStuck, r.id, sim.Describe(call), r.w.sites.at(call.Site))
	}
	return nil
}

func (r *Rank) msgOp(kind trace.Op, buf *Buffer, peer, tag int, pc uintptr) *sim.Op {
	op := r.w.eng.NewOp(r.id, kind)
	op.Peer, op.Tag, op.Site = fit32(peer), fit32(tag), pc
	if f := r.w.force; f != nil && peer == AnySource && f.rank == r.id && f.seq == op.Seq && kind.IsRecv() {
		op.Force(int32(f.src))
	}
	if buf != nil {
		op.Dtype, op.Count, op.Bytes = buf.dtype, int64(buf.count), int64(len(buf.data))
		op.SetData(buf.data)
		r.noteBuffer(op, buf)
	}
	r.last.Store(op)
	return op
}

// fit32 is v as the engine keeps a rank or tag, in 32 bits as MPI's and
// the trace's are; a value past them becomes the largest, so an out-of-range
// peer stays an invalid call (no world has that many ranks) instead of
// wrapping to a real rank.
func fit32(v int) int32 {
	if w := int32(v); int(w) == v {
		return w
	}
	if v < 0 {
		return math.MinInt32
	}
	return math.MaxInt32
}

func opError(op *sim.Op) error {
	switch op.Err {
	case trace.ErrNone, trace.ErrReadyNoRecv, trace.ErrTypeMismatch:
		return nil // reported as problems of the run; the call itself went through
	case trace.ErrTruncate:
		return fmt.Errorf("%w: %s: message truncated (sender's message is larger than the receive buffer)", ErrTruncated, sim.Describe(op))
	case trace.ErrCountMismatch:
		return fmt.Errorf("%w: %s", ErrCountMismatch, sim.Describe(op))
	default:
		return fmt.Errorf("%w: %s", ErrInvalid, sim.Describe(op))
	}
}

// Errors of single calls.
var (
	ErrTruncated     = errors.New("truncated")
	ErrCountMismatch = errors.New("stream send and recv counts differ")
	ErrInvalid       = errors.New("invalid call")
)

func (r *Rank) send(kind trace.Op, mode sim.Mode, buf *Buffer, dst, tag int, pc uintptr) error {
	if err := r.enter(); err != nil {
		return err
	}
	op := r.msgOp(kind, buf, dst, tag, pc)
	op.Mode = mode
	r.w.eng.PostSend(op)
	if !r.w.eng.BlockOn(op) {
		if err := r.pause(op); err != nil {
			return err
		}
	}
	return opError(op)
}

func (r *Rank) block(call *sim.Op, ops []*sim.Op, any bool) error {
	if !r.w.eng.Block(call, ops, any) {
		if err := r.pause(call); err != nil {
			return err
		}
	}
	if any {
		return nil // the caller reports the one that completed
	}
	for _, op := range ops {
		if err := opError(op); err != nil {
			return err
		}
	}
	return nil
}

// Send is a blocking standard-mode send of buf to rank dst with tag: eager
// (returns at once) up to the eager limit, rendezvous (waits for the matching
// receive and the transfer) above it.
//
//go:noinline
func (r *Rank) Send(buf *Buffer, dst, tag int) error {
	return r.send(trace.OpSend, sim.Standard, buf, dst, tag, callerPC())
}

// Ssend is a synchronous send: it returns only once the matching receive has started.
//
//go:noinline
func (r *Rank) Ssend(buf *Buffer, dst, tag int) error {
	return r.send(trace.OpSsend, sim.Synchronous, buf, dst, tag, callerPC())
}

// Bsend is a buffered send: it always completes locally.
//
//go:noinline
func (r *Rank) Bsend(buf *Buffer, dst, tag int) error {
	return r.send(trace.OpBsend, sim.Buffered, buf, dst, tag, callerPC())
}

// Rsend is a ready send: erroneous unless the matching receive is already posted.
//
//go:noinline
func (r *Rank) Rsend(buf *Buffer, dst, tag int) error {
	return r.send(trace.OpRsend, sim.Ready, buf, dst, tag, callerPC())
}

// Recv is a blocking receive into buf from rank src (or AnySource) with tag (or AnyTag).
//
//go:noinline
func (r *Rank) Recv(buf *Buffer, src, tag int) (Status, error) {
	if err := r.enter(); err != nil {
		return Status{}, err
	}
	op := r.msgOp(trace.OpRecv, buf, src, tag, callerPC())
	r.w.eng.PostRecv(op)
	if !r.w.eng.BlockOn(op) {
		if err := r.pause(op); err != nil {
			return status(op), err
		}
	}
	return status(op), opError(op)
}

func status(op *sim.Op) Status {
	if !op.Kind.IsRecv() || !op.Done() {
		return Status{Source: int(op.Source), Tag: int(op.StatusTag), Cancelled: op.Cancelled()}
	}
	return Status{Source: int(op.Source), Tag: int(op.StatusTag), Count: int(op.StatusCnt), Cancelled: op.Cancelled()}
}

func (r *Rank) isend(kind trace.Op, mode sim.Mode, buf *Buffer, dst, tag int, pc uintptr) (*Request, error) {
	if err := r.enter(); err != nil {
		return nil, err
	}
	op := r.msgOp(kind, buf, dst, tag, pc)
	op.Mode = mode
	r.w.eng.NewRequest(op)
	r.w.eng.PostSend(op)
	return &Request{r: r, op: op}, nil
}

// Isend starts a standard-mode send and returns at once. The buffer must not
// be written until the request completes (Wait, Test).
//
//go:noinline
func (r *Rank) Isend(buf *Buffer, dst, tag int) (*Request, error) {
	return r.isend(trace.OpIsend, sim.Standard, buf, dst, tag, callerPC())
}

// Issend starts a synchronous send.
//
//go:noinline
func (r *Rank) Issend(buf *Buffer, dst, tag int) (*Request, error) {
	return r.isend(trace.OpIssend, sim.Synchronous, buf, dst, tag, callerPC())
}

// Irecv starts a receive and returns at once. The buffer must not be read until the request completes.
//
//go:noinline
func (r *Rank) Irecv(buf *Buffer, src, tag int) (*Request, error) {
	if err := r.enter(); err != nil {
		return nil, err
	}
	op := r.msgOp(trace.OpIrecv, buf, src, tag, callerPC())
	r.w.eng.NewRequest(op)
	r.w.eng.PostRecv(op)
	if r.w.rec != nil {
		r.w.rec.watchRecv(op) // after what the engine wrote at the post (a message already there)
	}
	return &Request{r: r, op: op}, nil
}

func (r *Rank) reqOps(call string, reqs []*Request) ([]*sim.Op, error) {
	ops := make([]*sim.Op, 0, len(reqs))
	for i, q := range reqs {
		if q == nil {
			continue // a null request is complete
		}
		if q.r != r {
			return nil, fmt.Errorf("%w: %s: request %d belongs to rank %d, not rank %d", ErrInvalid, call, i, q.r.id, r.id)
		}
		ops = append(ops, q.op)
	}
	return ops, nil
}

func (r *Rank) waitCall(kind trace.Op, ops []*sim.Op, pc uintptr) *sim.Op {
	call := r.w.eng.NewOp(r.id, kind)
	call.Site = pc
	call.SetReqs(ops)
	r.last.Store(call)
	r.w.eng.Post(call)
	return call
}

// Wait blocks until the request completes and returns its status.
//
//go:noinline
func (r *Rank) Wait(q *Request) (Status, error) {
	if err := r.enter(); err != nil {
		return Status{}, err
	}
	ops, err := r.reqOps("Wait", []*Request{q})
	if err != nil {
		return Status{}, err
	}
	call := r.waitCall(trace.OpWait, ops, callerPC())
	err = r.block(call, ops, false)
	if len(ops) == 0 {
		return Status{}, err
	}
	return status(ops[0]), err
}

// Waitall blocks until every request completes.
//
//go:noinline
func (r *Rank) Waitall(reqs ...*Request) error {
	if err := r.enter(); err != nil {
		return err
	}
	ops, err := r.reqOps("Waitall", reqs)
	if err != nil {
		return err
	}
	call := r.waitCall(trace.OpWaitall, ops, callerPC())
	return r.block(call, ops, false)
}

// Waitany blocks until one of the requests completes and returns its index
// (in reqs) and status. With no active request it returns -1 at once.
//
//go:noinline
func (r *Rank) Waitany(reqs ...*Request) (int, Status, error) {
	if err := r.enter(); err != nil {
		return -1, Status{}, err
	}
	var ops []*sim.Op
	var index []int
	for i, q := range reqs {
		if q == nil || q.op.Waited() {
			continue
		}
		if q.r != r {
			return -1, Status{}, fmt.Errorf("%w: Waitany: request %d belongs to rank %d, not rank %d", ErrInvalid, i, q.r.id, r.id)
		}
		ops = append(ops, q.op)
		index = append(index, i)
	}
	call := r.waitCall(trace.OpWaitany, ops, callerPC())
	if err := r.block(call, ops, true); err != nil && call.Source < 0 {
		return -1, Status{}, err
	}
	k := call.Source
	if k < 0 {
		return -1, Status{}, nil
	}
	return index[k], status(ops[k]), opError(ops[k])
}

// Test reports whether the request has completed; if so it is retired like a Wait.
//
//go:noinline
func (r *Rank) Test(q *Request) (bool, Status, error) {
	if err := r.enter(); err != nil {
		return false, Status{}, err
	}
	ops, err := r.reqOps("Test", []*Request{q})
	if err != nil {
		return false, Status{}, err
	}
	call := r.waitCall(trace.OpTest, ops, callerPC())
	if !r.w.eng.Test(call, ops) {
		return false, Status{}, r.polled(call)
	}
	if len(ops) == 0 {
		return true, Status{}, nil
	}
	return true, status(ops[0]), opError(ops[0])
}

// Testall reports whether every request has completed; if so all are retired.
//
//go:noinline
func (r *Rank) Testall(reqs ...*Request) (bool, error) {
	if err := r.enter(); err != nil {
		return false, err
	}
	ops, err := r.reqOps("Testall", reqs)
	if err != nil {
		return false, err
	}
	call := r.waitCall(trace.OpTestall, ops, callerPC())
	if !r.w.eng.Test(call, ops) {
		return false, r.polled(call)
	}
	for _, op := range ops {
		if err := opError(op); err != nil {
			return true, err
		}
	}
	return true, nil
}

// Free releases the request without waiting for it (MPI_Request_free): an
// active operation still completes, unseen. Freeing an active send is
// legitimate (MPI-3.1 sec. 3.7.3); freeing an active receive or nonblocking
// collective is reported as a missing Wait.
//
//go:noinline
func (q *Request) Free() error {
	r := q.r
	if err := r.enter(); err != nil {
		return err
	}
	call := r.waitCall(trace.OpFree, []*sim.Op{q.op}, callerPC())
	r.w.eng.Free(call, q.op)
	return nil
}

// Cancel marks the request's operation for cancellation (MPI_Cancel): it
// succeeds if the operation has not matched yet (a receive no message
// reached, a send no receive took), and the operation then completes at
// once, cancelled; otherwise it completes normally. The request must still
// be completed by Wait, Test or Free, whose Status says which
// (Status.Cancelled). A nil or retired request is left alone.
//
//go:noinline
func (q *Request) Cancel() error {
	if q == nil {
		return nil
	}
	r := q.r
	if err := r.enter(); err != nil {
		return err
	}
	call := r.waitCall(trace.OpCancel, []*sim.Op{q.op}, callerPC())
	r.w.eng.Cancel(call, q.op)
	return nil
}

// Sendrecv sends sendbuf to dst and receives into recvbuf from src, posting
// both at once so that exchanges between ranks cannot deadlock.
//
//go:noinline
func (r *Rank) Sendrecv(sendbuf *Buffer, dst, sendtag int, recvbuf *Buffer, src, recvtag int) (Status, error) {
	if err := r.enter(); err != nil {
		return Status{}, err
	}
	pc := callerPC()
	s := r.msgOp(trace.OpSendrecv, sendbuf, dst, sendtag, pc)
	r.w.eng.PostSend(s)
	rv := r.msgOp(trace.OpRecv, recvbuf, src, recvtag, pc)
	r.noteSendrecv(s, sendbuf, rv, recvbuf)
	r.w.eng.PostRecv(rv)
	err := r.block(rv, []*sim.Op{s, rv}, false)
	return status(rv), err
}

// Compute advances this rank's virtual clock by d, standing for work on the device.
//
//go:noinline
func (r *Rank) Compute(d time.Duration) error {
	if err := r.enter(); err != nil {
		return err
	}
	call := r.w.eng.NewOp(r.id, trace.OpCompute)
	call.Site = callerPC()
	call.Count = int64(d)
	r.last.Store(call)
	r.w.eng.Post(call)
	if !r.w.eng.Compute(call, int64(d)) {
		return r.pause(call)
	}
	return nil
}

// Barrier blocks until every rank of the world has entered its matching
// Barrier; all leave one link latency after the last arrival.
//
//go:noinline
func (r *Rank) Barrier() error {
	if err := r.enter(); err != nil {
		return err
	}
	call := r.w.eng.NewOp(r.id, trace.OpBarrier)
	call.Site = callerPC()
	r.last.Store(call)
	if !r.w.eng.Barrier(call) {
		return r.pause(call)
	}
	return nil
}
