package sim

import "github.com/p2ptrace/p2ptrace/recorder/trace"

// Mode is the completion mode of a send.
type Mode uint8

const (
	Standard Mode = iota
	Synchronous
	Buffered
	Ready
)

// Op is one posted operation: a message op (send or receive) or a call that
// only blocks (wait family, synchronize). Its exported fields are what the
// caller passed and, once complete, the outcome; the engine owns the rest.
//
// An Op is 128 bytes, two cache lines, laid out by when the engine touches
// them: a replay of many ranks holds millions of ops at once, each visited
// again long after its post (when it matches, completes, is waited and
// released), by then out of the caches, and every byte of them costs (a
// 1024-rank all-to-all: 64 bytes of padding an op was +15% time; 192 ->
// 128 bytes, with the event queue paged, -7.7%). Line 0 holds the envelope and every fact the visits after the
// match read or write (the transfer's end, the completion, the wait, the
// release), so each of them costs one line of the op; line 1 holds the
// rest of what the match and the post write. What few ops have is out of
// line (opExt: a buffer, a wait's requests, a delay, a hash, a stream, a
// forced source, an observed match time). (TestOpLayout pins this. The ops
// of a big engine's slabs start a line each, TestBigSlabOpsAreLineAligned;
// a small slab's start 8 bytes past one, after the allocator's header.)
type Op struct {
	// Line 0: the envelope, the completion, and the state of the op's later
	// visits.
	Rank  int32
	Peer  int32 // destination of a send, requested source of a receive (trace.AnySource)
	Tag   int32 // trace.AnyTag on a wildcard receive
	Comm  int32
	match *Op
	DoneT int64
	Req   uint64 // request id of a nonblocking op (0 = none)
	Kind  trace.Op
	Dtype trace.Dtype
	Mode  Mode
	Err   trace.ErrCode
	// Forced restricts an AnySource receive to sends from one rank when
	// matching (replay's check forces each alternative match in turn; see
	// Force). Peer stays AnySource, so reports still show the wildcard.
	Forced    bool
	Flag      bool // the result of a Test or Testall; of a message op, cancelled (see Cancel)
	Dropped   bool // a fault dropped this message
	bits      opBits
	MatchRank int32
	Source    int32 // status of a receive
	StatusTag int32

	// Line 1: the rest of what a match and a post write.
	MatchSeq  uint64
	StatusCnt int64
	Bytes     int64
	Seq       uint64
	PostT     int64
	Count     int64
	// Site is the driver's call-site handle (a program counter for the code
	// driver, a site id for the trace driver); the engine only carries it.
	Site uintptr
	// ext holds what few ops have (see opExt): nil until one is set.
	ext *opExt
}

// opExt holds what few ops have, out of the Op's two cache lines: a
// message's buffer (a live run's; a replay's messages have none), the
// requests of a wait-family call, an injected delay, an observer's hash at
// post, a stream op's stream and stream id (a reduction's operator),
// a forced receive's source, the match time an observer reads, the eager
// copy of a live send's payload. An op gets one when one of them is set,
// and keeps it, zeroed, when newOp reuses the op.
type opExt struct {
	data     []byte
	reqs     []*Op
	delay    int64
	hashPost uint64
	stream   *stream
	// matchT is the virtual time of the match, kept only when the engine
	// has an Observer (the recorder writes it; nothing else reads it).
	matchT int64
	// streamID is the stream of a stream op; of a reduction collective, its
	// trace.ReduceOp (see Stream).
	streamID  int32
	forcedSrc int32 // see Force
	// snap is 1 + the engine's slot of the eager copy of a send's payload
	// (0 = none): kept beside the op, not in it.
	snap int32
	// anyAt is 1 + the index in Reqs of the request a Waitany waits for
	// alone (WaitanyAt); 0 for a Waitany on any of them.
	anyAt int32
}

// x is op's opExt, made if it has none.
func (op *Op) x() *opExt {
	if op.ext == nil {
		op.ext = new(opExt)
	}
	return op.ext
}

// Data is the send buffer (read when the transfer happens) or the receive
// buffer (written at delivery) of a message op; nil if it has none. The
// engine never keeps it past completion.
func (op *Op) Data() []byte {
	if op.ext == nil {
		return nil
	}
	return op.ext.data
}

// SetData sets the buffer of a message op (see Data). A caller sets it
// before the post, never after.
func (op *Op) SetData(b []byte) {
	if b != nil || op.ext != nil {
		op.x().data = b
	}
}

// Reqs are the ops a wait-family call waits on (never set on a message op).
func (op *Op) Reqs() []*Op {
	if op.ext == nil {
		return nil
	}
	return op.ext.reqs
}

// SetReqs sets the ops a wait-family call waits on, before it is made.
func (op *Op) SetReqs(ops []*Op) {
	if ops != nil || op.ext != nil {
		op.x().reqs = ops
	}
}

// Delay is the extra latency (ns) a fault injected into the message.
func (op *Op) Delay() int64 {
	if op.ext == nil {
		return 0
	}
	return op.ext.delay
}

// HashPost is the payload hash an observer took at post (0 = none; set
// only on an op with Data); it rides on the op so the receiver's side can
// reuse it.
func (op *Op) HashPost() uint64 {
	if op.ext == nil {
		return 0
	}
	return op.ext.hashPost
}

// SetHashPost sets HashPost (an observer, at the post).
func (op *Op) SetHashPost(h uint64) {
	if h != 0 || op.ext != nil {
		op.x().hashPost = h
	}
}

// Stream is the stream of a stream op; of a reduction collective, its
// trace.ReduceOp (trace.ReduceOpOf); 0 for any other op.
func (op *Op) Stream() int32 {
	if op.ext == nil {
		return 0
	}
	return op.ext.streamID
}

// SetStream sets Stream, before the op is made.
func (op *Op) SetStream(id int32) {
	if id != 0 || op.ext != nil {
		op.x().streamID = id
	}
}

// Force restricts an AnySource receive to sends from rank src (see
// Forced), before it is posted.
func (op *Op) Force(src int32) {
	op.Forced = true
	op.x().forcedSrc = src
}

// ForcedSrc is the rank a forced receive takes its message from (see
// Force); meaningless unless Forced.
func (op *Op) ForcedSrc() int32 {
	if op.ext == nil {
		return 0
	}
	return op.ext.forcedSrc
}

// MatchT is the virtual time the op matched, kept only in an engine with
// an Observer (0 otherwise, and for an op that never matched).
func (op *Op) MatchT() int64 {
	if op.ext == nil {
		return 0
	}
	return op.ext.matchT
}

// Copy returns a copy of op to keep for a report after the op is released
// (and recycled): its envelope, outcome, site, stream id, forced source and
// match time, without the rest of what is out of line (its buffer,
// requests, delay, hash and stream), which the original's next use will
// change.
func (op *Op) Copy() Op {
	c := *op
	c.ext = nil
	if x := op.ext; x != nil && (x.streamID|x.forcedSrc != 0 || x.matchT != 0) {
		c.ext = &opExt{streamID: x.streamID, forcedSrc: x.forcedSrc, matchT: x.matchT}
	}
	return c
}

// strm is the stream of a stream op (nil for any other).
func (op *Op) strm() *stream {
	if op.bits&bitStream == 0 {
		return nil
	}
	return op.ext.stream
}

// opBits are facts about an op's other lines kept in its line 0, so that
// the visits after the post need not read those lines to learn them.
type opBits uint16

const (
	bitActive      opBits = 1 << iota // a request not yet retired: Req != 0 && !waited
	bitStream                         // ext.stream != nil (set with it)
	bitNoData                         // posted as a message with Data nil: no payload to copy or clear
	bitDelay                          // Delay() != 0 (set with it, at the post)
	bitFromPost                       // see DeliveredAtPost
	bitFreed                          // a Free released its request
	bitCancelAsked                    // a Cancel named the op (whether or not it was withdrawn)
	bitDone                           // the op completed
	bitEager                          // a send delivered eagerly (copied at post)
	// bitAwaited: its rank is blocked in a wait-all that still needs this op.
	bitAwaited
	// bitDelivered: the transfer of this send finished; the engine will
	// not touch the op through its receive again.
	bitDelivered
	bitWaited // its request was retired by a Wait, a successful Test or Free
	// bitReleased: the driver released the op before its transfer was over.
	bitReleased
	// bitKept: a Problem refers to the op, so it is never recycled.
	bitKept
	// bitWildTaken: an AnySource receive took this send (see Release).
	bitWildTaken
)

// set sets or clears bit b.
func (op *Op) set(b opBits, on bool) {
	if on {
		op.bits |= b
	} else {
		op.bits &^= b
	}
}

// DeliveredAtPost reports, for a completed receive, that its data was taken
// from the send buffer as it was when the send was posted (eager, or matched
// inside the send call), so its hash is the send's hash at post.
func (op *Op) DeliveredAtPost() bool { return op.bits&bitFromPost != 0 }

// Done reports whether the op has completed.
func (op *Op) Done() bool { return op.bits&bitDone != 0 }

// HostBlocked reports whether the sender's host code waits in the call until
// the send completes (a blocking send), so it cannot write the buffer meanwhile.
func (op *Op) HostBlocked() bool {
	switch op.Kind {
	case trace.OpSend, trace.OpSsend, trace.OpBsend, trace.OpRsend, trace.OpSendrecv:
		return true
	}
	return false
}

// Eager reports whether the send was delivered eagerly (copied at post).
func (op *Op) Eager() bool { return op.bits&bitEager != 0 }

// Waited reports whether the op's request was retired by a Wait, a
// successful Test or Free.
func (op *Op) Waited() bool { return op.bits&bitWaited != 0 }

// Matched returns the peer op this op matched, or nil.
func (op *Op) Matched() *Op { return op.match }

// Envelope matching: one rule for live runs, replays and check's
// enumeration of alternatives.
func envelopeMatches(send, recv *Op) bool {
	if recv.Forced && recv.ForcedSrc() != send.Rank {
		return false
	}
	return Accepts(recv.Peer, recv.Tag, recv.Comm, send.Rank, send.Tag, send.Comm)
}

// Accepts is the envelope rule: a receive posted for (peer, tag, comm)
// accepts a message sent by rank src with sendTag on sendComm when the
// communicators are the same and the source and tag match, AnySource and
// AnyTag matching any.
func Accepts(peer, tag, comm, src, sendTag, sendComm int32) bool {
	return comm == sendComm && (peer == trace.AnySource || peer == src) && (tag == trace.AnyTag || tag == sendTag)
}
