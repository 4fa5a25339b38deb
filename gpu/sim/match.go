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
type envKey struct{ src, tag, comm int32 }

// noSource is the source of a forced receive that no send can match: it
// names a source other than the one it is forced to.
const noSource = math.MinInt32

// recvKey files a posted receive: every receive of one key accepts the same
// sends. A forced AnySource receive accepts its forced source only.
func recvKey(r *Op) envKey {
	src := r.Peer
	if r.Forced {
		if src == trace.AnySource || src == r.ForcedSrc() {
			src = r.ForcedSrc()
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
	// bySrc files the keys of a specific source by that source, one key a
	// source (the others stay in keys), once the index has held keys of
	// many sources (denseKeys): a queue that hears from hundreds of ranks
	// (an all-to-all's) then finds a key by one load of 16 bytes, where
	// keys would hash it and probe a table of 64 bytes a key, twice its
	// size as it grows. (Nil until then; kept, cleared, when the index is
	// reused.) A key's entries are all in one FIFO, here or in keys: see
	// fifoOf.
	bySrc []srcSlot
	ranks int  // the engine's ranks: the length of bySrc
	recv  bool // the queue holds receives (keys by recvKey), else sends (sendKey)
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

// srcSlot is the FIFO of the key (its source, tag, comm) in bySrc; it holds
// a key once its tail is set (a node id, never 0), as a keySlot does.
type srcSlot struct {
	tag, comm int32
	f         fifo
}

func (s *srcSlot) holds(k envKey) bool {
	return s.f.tail != 0 && s.tag == k.tag && s.comm == k.comm
}

// denseKeys is the least number of keys at which an index files keys by
// source (bySrc), and denseShare the least share of the ranks: so bySrc
// (16 bytes a rank) costs at most twice the keyTable it relieves, and an
// index of a few ranks' keys (a pipeline's tags) never makes one.
const (
	denseKeys  = 32
	denseShare = 8 // 1/8 of the ranks
)

// dense returns the slot of bySrc that k files in, or nil: none yet, or k
// has a wildcard source (those stay in keys).
func (ix *matchIndex) dense(k envKey) *srcSlot {
	if uint32(k.src) < uint32(len(ix.bySrc)) {
		return &ix.bySrc[k.src]
	}
	return nil
}

// lookup returns the FIFO of k, or nil; good until the next fifoOf.
func (ix *matchIndex) lookup(k envKey) *fifo {
	if s := ix.dense(k); s != nil && s.holds(k) {
		return &s.f
	}
	if i := ix.keys.find(k); i >= 0 {
		return &ix.keys.slots[i].f
	}
	return nil
}

// fifoOf returns the FIFO of k, adding k with an empty FIFO if it is absent
// (see keyTable.put); good until the next fifoOf. A key takes its source's
// slot in bySrc when the slot is empty and the key has no entries in keys;
// from then on every entry of the key goes there until the slot is empty
// and another key of that source takes it. So a key's entries are never
// split between bySrc and keys, and lookup, which looks in bySrc first,
// finds all of them.
func (ix *matchIndex) fifoOf(k envKey) *fifo {
	if ix.bySrc == nil && ix.keys.n >= max(denseKeys, ix.ranks/denseShare) {
		ix.goDense()
	}
	if s := ix.dense(k); s != nil {
		if s.holds(k) {
			return &s.f
		}
		if s.f.head == 0 && !ix.keys.live(k) {
			s.tag, s.comm, s.f = k.tag, k.comm, fifo{}
			return &s.f
		}
	}
	return ix.keys.put(k)
}

// goDense makes bySrc and moves there the keys of keys that can go (see
// fifoOf); keys keeps the rest.
func (ix *matchIndex) goDense() {
	ix.bySrc = make([]srcSlot, ix.ranks)
	rest := 0
	for i := range ix.keys.slots {
		ks := &ix.keys.slots[i]
		if ks.f.head == 0 {
			continue
		}
		if s := ix.dense(ks.key); s != nil && s.f.tail == 0 {
			s.tag, s.comm, s.f = int32(ks.key.tag), int32(ks.key.comm), ks.f
			ks.f.head = 0 // (empty there: the next grow drops it)
			continue
		}
		rest++
	}
	if rest == 0 {
		ix.keys.clear()
	}
}

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
	if f := ix.fifoOf(k); f.head == 0 {
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
// empty), and the key's FIFO (for take).
func (ix *matchIndex) head(k envKey) (int32, *fifo) {
	if f := ix.lookup(k); f != nil {
		return f.head, f
	}
	return 0, nil
}

// found is a node a lookup found, with its key and the key's FIFO (f nil
// if the lookup does not know them: a walk's).
type found struct {
	id int32
	f  *fifo
	k  envKey
}

// take removes the node n found, the head of its key's FIFO, and returns
// its op. A lookup that found the node by its key passes the FIFO on, so
// that take neither looks the key up again nor reads the op; else the key
// is the op's.
func (ix *matchIndex) take(n found) *Op {
	nd := &ix.nodes[n.id]
	op := nd.op
	if n.f == nil {
		n.k = sendKey(op)
		if ix.recv {
			n.k = recvKey(op)
		}
		n.f = ix.lookup(n.k)
	}
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
	n.f.head = nd.keyNext // (0: the key's FIFO is empty)
	ix.count(n.k, -1)
	ix.n--
	*nd = mnode{next: ix.free}
	ix.free = n.id
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
	clear(ix.bySrc)
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

// takeIndexed removes the node n found (see take) from the indexed q and
// returns its op; an index left empty goes back to the engine for the next
// queue that grows.
func (e *Engine) takeIndexed(q *matchQueue, n found) *Op {
	op := q.ix.take(n)
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
	return &matchIndex{nodes: make([]mnode, 1, 2*smallQueue), ranks: len(e.ranks)}
}

// postedFor returns the node of the earliest receive of the indexed posted
// queue that accepts send (id 0 if none).
func postedFor(ix *matchIndex, send *Op) found {
	k := envKey{send.Rank, send.Tag, send.Comm}
	best := found{k: k}
	best.id, best.f = ix.head(k)
	better := func(k envKey) {
		if id, f := ix.head(k); id != 0 && (best.id == 0 || ix.nodes[id].order < ix.nodes[best.id].order) {
			best = found{id, f, k}
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
	return best
}

// takePosted removes and returns the earliest receive of the indexed
// posted queue q that accepts send, or nil.
func (e *Engine) takePosted(q *matchQueue, send *Op) *Op {
	if n := postedFor(q.ix, send); n.id != 0 {
		return e.takeIndexed(q, n)
	}
	return nil
}

// recvPosted reports whether dst has a posted receive that accepts send.
func (e *Engine) recvPosted(dst *rank, send *Op) bool {
	if q := &dst.posted; q.ix != nil {
		return postedFor(q.ix, send).id != 0
	}
	for _, r := range dst.posted.list {
		if envelopeMatches(send, r) {
			return true
		}
	}
	return false
}

// unexpectedFor returns the node of the earliest send of the indexed
// unexpected queue that recv (a receive or a probe) accepts (id 0 if none).
func unexpectedFor(ix *matchIndex, recv *Op) found {
	k := recvKey(recv)
	if k.src == noSource {
		return found{}
	}
	if k.src != trace.AnySource && k.tag != trace.AnyTag {
		id, f := ix.head(k)
		return found{id, f, k}
	}
	return found{id: ix.walk(recv)}
}

// takeUnexpected removes and returns the earliest send of the indexed
// unexpected queue q that recv accepts, or nil.
func (e *Engine) takeUnexpected(q *matchQueue, recv *Op) *Op {
	if n := unexpectedFor(q.ix, recv); n.id != 0 {
		return e.takeIndexed(q, n)
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
	if n := unexpectedFor(q.ix, probe); n.id != 0 {
		return q.ix.nodes[n.id].op
	}
	return nil
}
