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
	// awaited: its rank is blocked in a wait-all that still needs this op.
	awaited bool
	// wildTaken: an AnySource receive took this send (see Release).
	wildTaken bool

	// Forced restricts an AnySource receive to sends from rank ForcedSrc
	// when matching (replay's check forces each alternative match in turn).
	// Peer stays AnySource, so reports still show the wildcard.
	Forced    bool
	ForcedSrc int32
	// anyAt is 1 + the index in Reqs of the request a Waitany waits for
	// alone (WaitanyAt); 0 for a Waitany on any of them.
	anyAt int32
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

// The event queue orders resumes of ranks and the arrivals and completions
// of ops by (time, seeded tie).
type evKind uint8

const (
	evResume evKind = iota
	evArrive
	evComplete
)

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
	key uint64 // the time with its sign bit flipped: unsigned order is time order
	tie uint64
	// ref is the rank of a resume, else the slot of the event's op, and the
	// kind above it: three words move faster than four fields.
	ref uint64
}

func (x *qent) kind() evKind { return evKind(x.ref >> 32) }
func (x *qent) slot() uint32 { return uint32(x.ref) }
func (x *qent) time() int64  { return int64(x.key ^ signBit) }

const signBit = 1 << 63

func timeKey(t int64) uint64 { return uint64(t) ^ signBit }

func (q *eventQueue) len() int {
	if q.hasFront {
		return len(q.h) + 1
	}
	return len(q.h)
}

func (q *eventQueue) minTime() int64 {
	if q.hasFront {
		return int64(q.front.key ^ signBit)
	}
	return int64(q.h[0].key ^ signBit)
}

// before is 1 when a comes before b in (t, tie) order and 0 otherwise,
// computed without branches: the heap's child choices are coin flips
// (ties are random), which a branch predictor cannot learn.
func before(a, b *qent) uint64 {
	_, c := bits.Sub64(a.tie, b.tie, 0)
	_, c = bits.Sub64(a.key, b.key, c)
	return c
}

// add queues an entry: ref is the kind above the rank of a resume or the
// slot of an op (see hold).
func (q *eventQueue) add(t int64, tie, ref uint64) {
	x := qent{key: timeKey(t), tie: tie, ref: ref}
	switch {
	case q.hasFront && before(&x, &q.front) != 0:
		x, q.front = q.front, x
	case !q.hasFront && (len(q.h) == 0 || before(&x, &q.h[0]) != 0):
		q.front, q.hasFront = x, true
		return
	}
	q.heapPush(x)
}

// hold parks op in a slot until take.
func (q *eventQueue) hold(op *Op) uint32 {
	if n := len(q.free); n > 0 {
		slot := q.free[n-1]
		q.free = q.free[:n-1]
		q.slots[slot] = op
		return slot
	}
	q.slots = append(q.slots, op)
	return uint32(len(q.slots) - 1)
}

// take returns the op parked in slot and frees the slot.
func (q *eventQueue) take(slot uint32) *Op {
	op := q.slots[slot]
	q.slots[slot] = nil
	q.free = append(q.free, slot)
	return op
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

// next removes the earliest entry. The heap is 4-ary: half the levels of a
// binary one, and a node's children are adjacent in memory.
func (q *eventQueue) next() qent {
	if q.hasFront {
		q.hasFront = false
		return q.front
	}
	return q.heapPop()
}

func (q *eventQueue) heapPop() qent {
	h := q.h
	top := h[0]
	n := len(h) - 1
	last := h[n]
	q.h = h[:n]
	if n > 0 {
		siftDown(h[:n], last)
	}
	return top
}

// siftDown fills the hole at the root with last: the hole sinks along the
// earliest children to the bottom, and last rises from there, usually a
// step or two (Floyd's heap pop: fewer comparisons than sinking last itself).
func siftDown(h []qent, last qent) {
	n := len(h)
	i := 0
	for {
		c := 4*i + 1
		if c+4 > n {
			if c < n {
				m := c
				for k := c + 1; k < n; k++ {
					m += int(before(&h[k], &h[m])) * (k - m)
				}
				h[i] = h[m]
				i = m
			}
			break
		}
		// Earliest of the four without branches on their (random) order.
		// (The masks only spare bounds checks: the indexes are below 4.)
		k := (*[4]qent)(h[c : c+4])
		a := int(before(&k[1], &k[0]))
		b := 2 + int(before(&k[3], &k[2]))
		m := (a + int(before(&k[b&3], &k[a&3]))*(b-a)) & 3
		h[i] = k[m]
		i = c + m
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
