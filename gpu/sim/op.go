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
// An Op is 256 bytes, four cache lines, laid out by when the engine touches
// them: a replay of many ranks holds millions of ops at once, each visited
// again long after its post (when it matches, completes, is waited and
// released), by then out of the caches. The envelope and what matching reads
// come first, then the outcome, then what completion and release read; the
// last line holds what the engine reads rarely (streams, reports, wait
// calls' requests), so a message op's match and completion miss on three
// lines, not four. (TestOpLayout pins this.)
type Op struct {
	// Line 0: the envelope.
	Rank  int
	Peer  int // destination of a send, requested source of a receive (trace.AnySource)
	Tag   int // trace.AnyTag on a wildcard receive
	Comm  int
	Bytes int64
	PostT int64
	match *Op
	Kind  trace.Op
	Dtype trace.Dtype
	Mode  Mode
	done  bool
	eager bool
	// awaited: its rank is blocked in a wait-all that still needs this op.
	awaited bool
	// delivered: the transfer of this send finished; the engine will not
	// touch the op through its receive again.
	delivered bool
	// Forced restricts an AnySource receive to sends from rank ForcedSrc
	// when matching (replay's check forces each alternative match in turn).
	// Peer stays AnySource, so reports still show the wildcard.
	Forced bool

	// Line 1: the outcome.
	MatchT, DoneT int64
	MatchRank     int
	MatchSeq      uint64
	Source        int // status of a receive
	StatusTag     int
	StatusCnt     int64
	stream        *stream

	// Line 2.
	Seq   uint64
	Req   uint64 // request id of a nonblocking op (0 = none)
	Delay int64  // injected extra latency, ns
	// Data is the send buffer (read when the transfer happens) or the receive
	// buffer (written at delivery). The engine never keeps it past completion.
	Data      []byte
	ForcedSrc int32
	// snap is 1 + the engine's slot of the eager copy of a send's payload
	// (0 = none): kept beside the op, not in it, so that an Op fits its
	// four cache lines.
	snap     int32
	fromPost bool
	waited   bool
	// released: the driver released the op before its transfer was over.
	released bool
	// kept: a Problem refers to the op, so it is never recycled.
	kept bool
	// wildTaken: an AnySource receive took this send (see Release).
	wildTaken bool

	// Line 3: read rarely.
	Count int64
	// Site is the driver's call-site handle (a program counter for the code
	// driver, a site id for the trace driver); the engine only carries it.
	Site   uintptr
	Stream int
	// HashPost is the payload hash an observer took at post (0 = none); it
	// rides on the op so the receiver's side can reuse it.
	HashPost uint64
	Reqs     []*Op // ops a wait-family call waits on (never set on a message op)
	// anyAt is 1 + the index in Reqs of the request a Waitany waits for
	// alone (WaitanyAt); 0 for a Waitany on any of them.
	anyAt   int32
	Err     trace.ErrCode
	Flag    bool // the result of a Test or Testall; of a message op, cancelled (see Cancel)
	Dropped bool // a fault dropped this message
	freed   bool
}

// DeliveredAtPost reports, for a completed receive, that its data was taken
// from the send buffer as it was when the send was posted (eager, or matched
// inside the send call), so its hash is the send's hash at post.
func (op *Op) DeliveredAtPost() bool { return op.fromPost }

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
