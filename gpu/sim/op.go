package sim

import (
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

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
type Op struct {
	Rank  int
	Seq   uint64
	Kind  trace.Op
	Mode  Mode
	Peer  int // destination of a send, requested source of a receive (trace.AnySource)
	Tag   int // trace.AnyTag on a wildcard receive
	Comm  int
	Dtype trace.Dtype
	Count int64
	Bytes int64
	// Data is the send buffer (read when the transfer happens) or the receive
	// buffer (written at delivery). The engine never keeps it past completion.
	Data []byte
	// Site is the driver's call-site handle (a program counter for the code
	// driver, a site id for the trace driver); the engine only carries it.
	Site   uintptr
	Stream int
	Req    uint64 // request id of a nonblocking op (0 = none)
	Reqs   []*Op  // ops a wait-family call waits on

	PostT, MatchT, DoneT int64

	// Outcome.
	MatchRank int
	MatchSeq  uint64
	Source    int // status of a receive
	StatusTag int
	StatusCnt int64
	Err       trace.ErrCode
	// HashPost is the payload hash an observer took at post (0 = none); it
	// rides on the op so the receiver's side can reuse it.
	HashPost uint64
	Flag     bool // the result of a Test or Testall
	Dropped  bool // a fault dropped this message
	// Forced restricts an AnySource receive to sends from rank ForcedSrc
	// when matching (replay's check forces each alternative match in turn).
	// Peer stays AnySource, so reports still show the wildcard. (Placed
	// here, the two fit in the padding before Delay.)
	Forced    bool
	ForcedSrc int32
	Delay     int64 // injected extra latency, ns

	done     bool
	freed    bool
	waited   bool
	eager    bool
	snapshot []byte // eager copy of the payload
	match    *Op
	arriveT  int64
	stream   *stream
	fromPost bool
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

// Envelope matching: one rule for live runs and replays.
func envelopeMatches(send, recv *Op) bool {
	if recv.Comm != send.Comm {
		return false
	}
	if recv.Peer != trace.AnySource && recv.Peer != send.Rank {
		return false
	}
	if recv.Forced && int(recv.ForcedSrc) != send.Rank {
		return false
	}
	if recv.Tag != trace.AnyTag && recv.Tag != send.Tag {
		return false
	}
	return true
}

// event queue: a binary heap ordered by (time, seeded tie).
type evKind uint8

const (
	evResume evKind = iota
	evArrive
	evComplete
)

type event struct {
	t    int64
	tie  uint64
	op   *Op
	rank int32
	kind evKind
}

type eventQueue struct{ h []event }

func (q *eventQueue) len() int { return len(q.h) }

func (q *eventQueue) minTime() int64 { return q.h[0].t }

func less(a, b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.tie < b.tie
}

func (q *eventQueue) push(ev event) {
	q.h = append(q.h, ev)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	h := q.h
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = event{}
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && less(&h[r], &h[l]) {
			m = r
		}
		if !less(&h[m], &h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	q.h = h
	return top
}
