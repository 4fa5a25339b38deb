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
// An Op is 192 bytes, three cache lines, laid out by when the engine
// touches them: a replay of many ranks holds millions of ops at once, each
// visited again long after its post (when it matches, completes, is waited
// and released), by then out of the caches, and every byte of them costs
// (a 1024-rank all-to-all: +128 bytes an op was +21-24% time). Line 0
// holds the envelope and every fact the visits after the match read or
// write (the transfer's end, the completion, the wait, the release): each
// of them costs one line of the op, not three. Line 1 holds the rest of
// what the match reads and writes, the outcome; line 2 what only the post
// or rare paths touch, and what few ops have is out of line (opExt: a
// buffer, a wait's requests, a delay, a hash, a stream). (TestOpLayout
// pins this.)
type Op struct {
	// Line 0: the envelope, the completion, and the state of the op's later
	// visits.
	Rank  int
	Peer  int // destination of a send, requested source of a receive (trace.AnySource)
	Tag   int // trace.AnyTag on a wildcard receive
	Comm  int
	match *Op
	DoneT int64
	Kind  trace.Op
	Dtype trace.Dtype
	Mode  Mode
	bits  opBits
	done  bool
	eager bool
	// awaited: its rank is blocked in a wait-all that still needs this op.
	awaited bool
	// delivered: the transfer of this send finished; the engine will not
	// touch the op through its receive again.
	delivered bool
	waited    bool
	// released: the driver released the op before its transfer was over.
	released bool
	// kept: a Problem refers to the op, so it is never recycled.
	kept bool
	// wildTaken: an AnySource receive took this send (see Release).
	wildTaken bool
	// Forced restricts an AnySource receive to sends from rank ForcedSrc
	// when matching (replay's check forces each alternative match in turn).
	// Peer stays AnySource, so reports still show the wildcard.
	Forced  bool
	Flag    bool // the result of a Test or Testall; of a message op, cancelled (see Cancel)
	Dropped bool // a fault dropped this message
	Err     trace.ErrCode

	// Line 1: the rest of what a match reads and writes.
	MatchT    int64
	MatchRank int
	MatchSeq  uint64
	Source    int // status of a receive
	StatusTag int
	StatusCnt int64
	Bytes     int64
	Seq       uint64

	// Line 2: what the post writes besides.
	PostT int64
	Req   uint64 // request id of a nonblocking op (0 = none)
	Count int64
	// Site is the driver's call-site handle (a program counter for the code
	// driver, a site id for the trace driver); the engine only carries it.
	Site   uintptr
	Stream int
	// ext holds what few ops have (see opExt): nil until one is set.
	ext *opExt
	// snap is 1 + the engine's slot of the eager copy of a send's payload
	// (0 = none): kept beside the op, not in it.
	snap      int32
	ForcedSrc int32 // see Forced (set with it, never without)
	// anyAt is 1 + the index in Reqs of the request a Waitany waits for
	// alone (WaitanyAt); 0 for a Waitany on any of them.
	anyAt int32
}

// opExt holds what few ops have, out of the Op's three cache lines: a
// message's buffer (a live run's; a replay's messages have none), the
// requests of a wait-family call, an injected delay, an observer's hash at
// post, a stream op's stream. An op gets one when one of them is set, and
// keeps it, zeroed, when newOp reuses the op.
type opExt struct {
	data     []byte
	reqs     []*Op
	delay    int64
	hashPost uint64
	stream   *stream
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

// Copy returns a copy of op to keep for a report after the op is released
// (and recycled): its envelope, outcome and site, without what is out of
// line (its buffer, requests, delay, hash and stream: opExt), which the
// original's next use will change.
func (op *Op) Copy() Op {
	c := *op
	c.ext = nil
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
type opBits uint8

const (
	bitActive      opBits = 1 << iota // a request not yet retired: Req != 0 && !waited
	bitStream                         // ext.stream != nil (set with it)
	bitNoData                         // posted as a message with Data nil: no payload to copy or clear
	bitDelay                          // Delay() != 0 (set with it, at the post)
	bitFromPost                       // see DeliveredAtPost
	bitFreed                          // a Free released its request
	bitCancelAsked                    // a Cancel named the op (whether or not it was withdrawn)
)

// DeliveredAtPost reports, for a completed receive, that its data was taken
// from the send buffer as it was when the send was posted (eager, or matched
// inside the send call), so its hash is the send's hash at post.
func (op *Op) DeliveredAtPost() bool { return op.bits&bitFromPost != 0 }

// Done reports whether the op has completed.
func (op *Op) Done() bool { return op.done }

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
func (op *Op) Eager() bool { return op.eager }

// Waited reports whether the op's request was retired by a Wait, a
// successful Test or Free.
func (op *Op) Waited() bool { return op.waited }

// Matched returns the peer op this op matched, or nil.
func (op *Op) Matched() *Op { return op.match }

// Envelope matching: one rule for live runs, replays and check's
// enumeration of alternatives.
func envelopeMatches(send, recv *Op) bool {
	if recv.Forced && int(recv.ForcedSrc) != send.Rank {
		return false
	}
	return Accepts(recv.Peer, recv.Tag, recv.Comm, send.Rank, send.Tag, send.Comm)
}

// Accepts is the envelope rule: a receive posted for (peer, tag, comm)
// accepts a message sent by rank src with sendTag on sendComm when the
// communicators are the same and the source and tag match, AnySource and
// AnyTag matching any.
func Accepts(peer, tag, comm, src, sendTag, sendComm int) bool {
	return comm == sendComm && (peer == trace.AnySource || peer == src) && (tag == trace.AnyTag || tag == sendTag)
}
