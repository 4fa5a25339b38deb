package sim

import (
	"math/bits"

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
	Peer  int // destination of a send, requested source of a receive (trace.AnySource)
	Tag   int // trace.AnyTag on a wildcard receive
	Comm  int
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
	// HashPost is the payload hash an observer took at post (0 = none); it
	// rides on the op so the receiver's side can reuse it.
	HashPost uint64
	Delay    int64 // injected extra latency, ns

	snapshot []byte // eager copy of the payload
	match    *Op
	arriveT  int64
	stream   *stream

	// The one-byte fields last, packed together.
	Kind    trace.Op
	Mode    Mode
	Dtype   trace.Dtype
	Err     trace.ErrCode
	Flag    bool // the result of a Test or Testall
	Dropped bool // a fault dropped this message

	done     bool
	freed    bool
	waited   bool
	eager    bool
	fromPost bool
	// delivered: the transfer of this send finished; the engine will not
	// touch the op through its receive again.
	delivered bool
	// kept: a Problem refers to the op, so it is never recycled.
	kept bool
	// released: the driver released the op before its transfer was over.
	released bool
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

// eventQueue is a binary heap of pointer-free entries, so moving them up
// and down costs no write barriers; the ops of arrivals and completions wait
// in slots beside it.
//
// An entry earlier than everything in the heap waits in front of it instead:
// a rank woken by a completion often runs next (its resume drew an earlier
// tie than all that is pending), and then it never enters the heap.
type eventQueue struct {
	h        []qent
	front    qent
	hasFront bool
	slots    []*Op
	free     []uint32
}

type qent struct {
	t    int64
	tie  uint64
	ref  uint32 // the rank of a resume, else the slot of the event's op
	kind evKind
}

func (q *eventQueue) len() int {
	if q.hasFront {
		return len(q.h) + 1
	}
	return len(q.h)
}

func (q *eventQueue) minTime() int64 {
	if q.hasFront {
		return q.front.t
	}
	return q.h[0].t
}

// before is 1 when a comes before b in (t, tie) order and 0 otherwise,
// computed without branches: the heap's child choices are coin flips
// (ties are random), which a branch predictor cannot learn.
func before(a, b *qent) uint64 {
	const sign = 1 << 63 // signed times as unsigned, order kept
	_, c := bits.Sub64(a.tie, b.tie, 0)
	_, c = bits.Sub64(uint64(a.t)^sign, uint64(b.t)^sign, c)
	return c
}

func (q *eventQueue) push(ev event) {
	x := qent{t: ev.t, tie: ev.tie, kind: ev.kind, ref: uint32(ev.rank)}
	if ev.kind != evResume {
		if n := len(q.free); n > 0 {
			x.ref = q.free[n-1]
			q.free = q.free[:n-1]
			q.slots[x.ref] = ev.op
		} else {
			x.ref = uint32(len(q.slots))
			q.slots = append(q.slots, ev.op)
		}
	}
	switch {
	case q.hasFront && before(&x, &q.front) != 0:
		x, q.front = q.front, x
	case !q.hasFront && (len(q.h) == 0 || before(&x, &q.h[0]) != 0):
		q.front, q.hasFront = x, true
		return
	}
	q.heapPush(x)
}

func (q *eventQueue) heapPush(x qent) {
	q.h = append(q.h, x)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if before(&x, &h[p]) == 0 {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

// pop removes the earliest event. The heap is 4-ary (half the levels of a
// binary one, each level's children adjacent in memory). The hole left at
// the root sinks along the earliest children to a leaf, and the last entry
// then rises from there, usually a step or two (Floyd's heap pop).
func (q *eventQueue) pop() event {
	if q.hasFront {
		q.hasFront = false
		return q.payload(q.front)
	}
	return q.payload(q.heapPop())
}

func (q *eventQueue) heapPop() qent {
	h := q.h
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	q.h = h
	if n > 0 {
		i := 0
		for {
			c := 4*i + 1
			if c+3 < n {
				// Earliest of four without branches on the (random) order.
				a := c + int(before(&h[c+1], &h[c]))
				b := c + 2 + int(before(&h[c+3], &h[c+2]))
				d := before(&h[b], &h[a])
				c = a + int(d)*(b-a)
			} else if c < n {
				m := c
				for k := c + 1; k < n; k++ {
					if before(&h[k], &h[m]) != 0 {
						m = k
					}
				}
				c = m
			} else {
				break
			}
			h[i] = h[c]
			i = c
		}
		for i > 0 {
			p := (i - 1) / 4
			if before(&last, &h[p]) == 0 {
				break
			}
			h[i] = h[p]
			i = p
		}
		h[i] = last
	}
	return top
}

// payload turns an entry back into its event, freeing the op's slot.
func (q *eventQueue) payload(top qent) event {
	ev := event{t: top.t, tie: top.tie, kind: top.kind}
	if top.kind == evResume {
		ev.rank = int32(top.ref)
	} else {
		ev.op = q.slots[top.ref]
		q.slots[top.ref] = nil
		q.free = append(q.free, top.ref)
	}
	return ev
}
