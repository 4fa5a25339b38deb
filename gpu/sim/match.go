package sim

import (
	"math"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Matching queues. Each rank has two: its posted receives not yet matched,
// in post order, and the sends to it whose envelope arrived unmatched (the
// unexpected messages), in arrival order. The rules they keep:
//
//   - A send's envelope matches the earliest posted receive that accepts
//     it (envelopeMatches), and a receive matches the earliest arrived
//     send it accepts: the order of posts and arrivals decides, whatever
//     mix of specific and wildcard (AnySource, AnyTag) envelopes the
//     queue holds. (Non-overtaking: two sends of one pair arrive in post
//     order, see transit, so a receive takes the first of them.)
//   - Communicators never mix (Accepts).
//   - A probe sees the earliest arrived send it accepts and leaves it.
//
// A queue of a few entries (a ring's, a pipeline's) is a slice scanned in
// order: at that size a scan costs less than any index. Past smallQueue
// entries it becomes a matchIndex, until it is empty again.
type matchQueue struct {
	// list holds the entries in order while ix is nil. Its capacity is at
	// most smallQueue, and 0 while ix holds the entries: one test of its
	// length against its capacity says whether an entry goes there.
	list []*Op
	ix   *matchIndex // the entries, while there are many
}

// smallQueue is the most entries a queue holds as a plain slice.
const smallQueue = 8

// envKey is an envelope as a matching index files it: the source rank, the
// tag and the communicator. A posted receive's key may hold AnySource or
// AnyTag; an arrived send's key never holds AnySource.
type envKey struct{ src, tag, comm int }

// noSource is the source of a forced receive that no send can match: it
// names a source other than the one it is forced to.
const noSource = math.MinInt

// recvKey files a posted receive: every receive of one key accepts the same
// sends. A forced AnySource receive accepts its forced source only.
func recvKey(r *Op) envKey {
	src := r.Peer
	if r.Forced {
		if src == trace.AnySource || src == int(r.ForcedSrc) {
			src = int(r.ForcedSrc)
		} else {
			src = noSource
		}
	}
	return envKey{src, r.Tag, r.Comm}
}

// sendKey files an arrived send.
func sendKey(s *Op) envKey { return envKey{s.Rank, s.Tag, s.Comm} }

// matchIndex holds a queue's entries in a doubly linked list in queue order
// (each with its order number) and, per key, a FIFO of the entries of that
// key. All entries of a key match alike, so the earliest of a key that
// matches is the head of its FIFO: taking an entry always pops a FIFO's
// head and unlinks it from the list, in constant time.
//
// For a send looking for a receive the candidates are the heads of up to
// four keys (its source or AnySource, its tag or AnyTag); the least order
// number wins. A receive with a specific source and tag finds its send at
// the head of one key; a wildcard receive (or a probe) walks the list from
// its front to the first send it accepts, the same walk as the slice's.
type matchIndex struct {
	// list is the slice of the queue the index serves (its length 0), for
	// the queue to take back once the index empties.
	list        []*Op
	nodes       []mnode // node 0 stands for none
	free        int32   // a free node, chained through next
	first, last int32
	n           int
	order       uint64 // the next entry's order number
	keys        keyTable
	recv        bool // the queue holds receives (keys by recvKey), else sends (sendKey)
	// anySrc, anyTag and anyBoth count the entries whose key holds
	// AnySource, AnyTag or both: a send looks up those keys only when some
	// receive has them.
	anySrc, anyTag, anyBoth int
}

type mnode struct {
	op         *Op
	order      uint64
	prev, next int32 // the queue's order
	keyNext    int32 // the FIFO of the entry's key (the key itself is the op's: see take)
}

// fifo is the first and last node of one key's entries.
type fifo struct{ head, tail int32 }

// push appends op, filed under k, to the queue's end.
func (ix *matchIndex) push(op *Op, k envKey) {
	id := ix.free
	if id != 0 {
		ix.free = ix.nodes[id].next
	} else {
		id = int32(len(ix.nodes))
		ix.nodes = append(ix.nodes, mnode{})
	}
	nd := &ix.nodes[id]
	*nd = mnode{op: op, order: ix.order, prev: ix.last}
	ix.order++
	if ix.last != 0 {
		ix.nodes[ix.last].next = id
	} else {
		ix.first = id
	}
	ix.last = id
	ix.n++
	if f := ix.keys.put(k); f.head == 0 {
		f.head, f.tail = id, id
	} else {
		ix.nodes[f.tail].keyNext = id
		f.tail = id
	}
	ix.count(k, 1)
}

// count adds d to the wildcard counts of k.
func (ix *matchIndex) count(k envKey, d int) {
	switch {
	case k.src == trace.AnySource && k.tag == trace.AnyTag:
		ix.anyBoth += d
	case k.src == trace.AnySource:
		ix.anySrc += d
	case k.tag == trace.AnyTag:
		ix.anyTag += d
	}
}

// head returns the first node of key k, or 0 (none, or its FIFO is
// empty), and the key's slot in keys (for take).
func (ix *matchIndex) head(k envKey) (int32, int) {
	if i := ix.keys.find(k); i >= 0 {
		return ix.keys.slots[i].f.head, i
	}
	return 0, -1
}

// take removes node id, the head of its key's FIFO, and returns its op.
// slot is the key's slot in keys, or -1 if the caller does not know it
// (then the key is the op's): a lookup that found the node passes it on, so
// that take neither hashes the key again nor reads the op.
func (ix *matchIndex) take(id int32, slot int) *Op {
	nd := &ix.nodes[id]
	op := nd.op
	if slot < 0 {
		k := sendKey(op)
		if ix.recv {
			k = recvKey(op)
		}
		slot = ix.keys.find(k)
	}
	ks := &ix.keys.slots[slot]
	if nd.prev != 0 {
		ix.nodes[nd.prev].next = nd.next
	} else {
		ix.first = nd.next
	}
	if nd.next != 0 {
		ix.nodes[nd.next].prev = nd.prev
	} else {
		ix.last = nd.prev
	}
	ks.f.head = nd.keyNext // (0: the key's FIFO is empty)
	ix.count(ks.key, -1)
	ix.n--
	*nd = mnode{next: ix.free}
	ix.free = id
	return op
}

// walk returns the first node, in queue order, of a send recv accepts, or 0.
func (ix *matchIndex) walk(recv *Op) int32 {
	for id := ix.first; id != 0; id = ix.nodes[id].next {
		if envelopeMatches(ix.nodes[id].op, recv) {
			return id
		}
	}
	return 0
}

// reset empties the index for reuse.
func (ix *matchIndex) reset() {
	clear(ix.nodes) // (drops the ops)
	ix.nodes = ix.nodes[:1]
	ix.free, ix.first, ix.last, ix.n, ix.order = 0, 0, 0, 0, 0
	ix.keys.clear()
	ix.anySrc, ix.anyTag, ix.anyBoth = 0, 0, 0
}

// all yields the queue's entries in order (for reports: not on a hot path).
func (q *matchQueue) all(yield func(*Op) bool) {
	if q.ix == nil {
		for _, op := range q.list {
			if !yield(op) {
				return
			}
		}
		return
	}
	for id := q.ix.first; id != 0; id = q.ix.nodes[id].next {
		if !yield(q.ix.nodes[id].op) {
			return
		}
	}
}

// file adds op to the end of q, a receive (posted) or a send (unexpected),
// whose list is full: it grows up to smallQueue entries, then becomes an
// index. (An append to a list with room is the callers' own, inline: the
// common case.)
func (e *Engine) file(q *matchQueue, op *Op, recv bool) {
	if q.ix == nil && len(q.list) < smallQueue {
		grown := make([]*Op, len(q.list), min(smallQueue, max(2, 2*cap(q.list))))
		copy(grown, q.list)
		q.list = append(grown, op)
		return
	}
	key := sendKey
	if recv {
		key = recvKey
	}
	if q.ix == nil {
		q.ix = e.newIndex()
		e.nIndexed++
		q.ix.recv = recv
		for i, o := range q.list {
			q.ix.push(o, key(o))
			q.list[i] = nil
		}
		q.ix.list, q.list = q.list[:0], nil
	}
	q.ix.push(op, key(op))
}

// takeIndexed removes node id, of the key in slot (see take), from the
// indexed q and returns its op; an index left empty goes back to the engine
// for the next queue that grows.
func (e *Engine) takeIndexed(q *matchQueue, id int32, slot int) *Op {
	op := q.ix.take(id, slot)
	if q.ix.n == 0 {
		q.list, q.ix.list = q.ix.list, nil
		q.ix.reset()
		e.spareIx = append(e.spareIx, q.ix)
		q.ix = nil
		e.nIndexed--
	}
	return op
}

func (e *Engine) newIndex() *matchIndex {
	if n := len(e.spareIx); n > 0 {
		ix := e.spareIx[n-1]
		e.spareIx = e.spareIx[:n-1]
		return ix
	}
	return &matchIndex{nodes: make([]mnode, 1, 2*smallQueue)}
}

// postedFor returns the node of the earliest receive of the indexed posted
// queue that accepts send, or 0, and its key's slot.
func postedFor(ix *matchIndex, send *Op) (int32, int) {
	best, slot := ix.head(envKey{send.Rank, send.Tag, send.Comm})
	better := func(k envKey) {
		if id, i := ix.head(k); id != 0 && (best == 0 || ix.nodes[id].order < ix.nodes[best].order) {
			best, slot = id, i
		}
	}
	if ix.anySrc > 0 {
		better(envKey{trace.AnySource, send.Tag, send.Comm})
	}
	if ix.anyTag > 0 {
		better(envKey{send.Rank, trace.AnyTag, send.Comm})
	}
	if ix.anyBoth > 0 {
		better(envKey{trace.AnySource, trace.AnyTag, send.Comm})
	}
	return best, slot
}

// takePosted removes and returns the earliest receive of the indexed
// posted queue q that accepts send, or nil.
func (e *Engine) takePosted(q *matchQueue, send *Op) *Op {
	if id, slot := postedFor(q.ix, send); id != 0 {
		return e.takeIndexed(q, id, slot)
	}
	return nil
}

// recvPosted reports whether dst has a posted receive that accepts send.
func (e *Engine) recvPosted(dst *rank, send *Op) bool {
	if q := &dst.posted; q.ix != nil {
		id, _ := postedFor(q.ix, send)
		return id != 0
	}
	for _, r := range dst.posted.list {
		if envelopeMatches(send, r) {
			return true
		}
	}
	return false
}

// unexpectedFor returns the node of the earliest send of the indexed
// unexpected queue that recv (a receive or a probe) accepts, or 0, and its
// key's slot when known (else -1: see take).
func unexpectedFor(ix *matchIndex, recv *Op) (int32, int) {
	k := recvKey(recv)
	if k.src == noSource {
		return 0, -1
	}
	if k.src != trace.AnySource && k.tag != trace.AnyTag {
		return ix.head(k)
	}
	return ix.walk(recv), -1
}

// takeUnexpected removes and returns the earliest send of the indexed
// unexpected queue q that recv accepts, or nil.
func (e *Engine) takeUnexpected(q *matchQueue, recv *Op) *Op {
	if id, slot := unexpectedFor(q.ix, recv); id != 0 {
		return e.takeIndexed(q, id, slot)
	}
	return nil
}

// probeMatch returns the earliest arrived, unmatched send that probe
// accepts, and leaves it there.
func probeMatch(rk *rank, probe *Op) *Op {
	q := &rk.unexpected
	if q.ix == nil {
		for _, s := range q.list {
			if envelopeMatches(s, probe) {
				return s
			}
		}
		return nil
	}
	if id, _ := unexpectedFor(q.ix, probe); id != 0 {
		return q.ix.nodes[id].op
	}
	return nil
}
