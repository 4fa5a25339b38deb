package sim

import (
	"cmp"
	"math"
	"math/bits"
)

// The event queue orders resumes of ranks and the arrivals and completions
// of ops by (time, seeded tie).
type evKind uint8

const (
	evResume evKind = iota
	evArrive
	evComplete
)

// eventQueue is a min-queue on (time, tie). Many entries share a time:
// ranks that run in step post alike, so their completions fall due
// together, and a rank woken by one resumes at that same time. Ties are
// uniformly random (drawn from the seeded generator), so the entries of one
// time are ordered in expected constant time by bucketing their ties (see
// tieGroup). Two groups serve two times at once (in a ring in step: the
// time being processed and the next one); entries of other times go to a
// 4-ary heap. next takes the least of the three: each is exact on its own,
// so the order is the same whichever holds an entry, and the same as one
// heap's (a replay's output does not depend on this layout).
//
// Entries are pointer-free, so moving them costs no write barriers; the ops
// of arrivals and completions wait in slots beside them.
type eventQueue struct {
	h []qent
	// front is an entry earlier than all of h, kept out of it: a rank woken
	// by a completion often runs next (its resume drew an earlier tie than
	// all that is pending), and then it never enters the heap.
	front    qent
	hasFront bool
	g        [2]tieGroup
	slots    paged[*Op]    // the ops of the queued events, by slot
	free     paged[uint32] // the slots no event holds
	// ahead holds the next entries of a large group, popped in advance so
	// that their ops can be loaded before they are processed (see lookAhead).
	// noAhead turns it off (a test compares the orders with and without).
	ahead   lookAhead
	noAhead bool
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
	n := len(q.h) + int(q.g[0].n) + int(q.g[1].n) + int(q.ahead.n)
	if q.hasFront {
		n++
	}
	return n
}

// minTime is the earliest time queued; the queue must not be empty.
func (q *eventQueue) minTime() int64 {
	k := uint64(1<<64 - 1)
	if q.hasFront {
		k = q.front.key
	} else if len(q.h) > 0 {
		k = q.h[0].key
	}
	for i := range q.g {
		if g := &q.g[i]; g.n > 0 && g.key < k {
			k = g.key
		}
	}
	if q.ahead.n > 0 && q.ahead.key < k {
		k = q.ahead.key
	}
	return int64(k ^ signBit)
}

// add queues an entry: ref is the kind above the rank of a resume or the
// slot of an op (see hold).
func (q *eventQueue) add(t int64, tie, ref uint64) {
	k := timeKey(t)
	g0, g1 := &q.g[0], &q.g[1]
	switch { // (toGroup's test, inline: the common case)
	case g0.n > 0 && g0.key == k && g0.n < g0.room:
		g0.insert(tie, ref)
		return
	case g1.n > 0 && g1.key == k && g1.n < g1.room:
		g1.insert(tie, ref)
		return
	}
	x := qent{key: k, tie: tie, ref: ref}
	switch {
	case !q.hasFront && (len(q.h) == 0 || before(&x, &q.h[0]) != 0):
		q.front, q.hasFront = x, true
		return
	case q.hasFront && before(&x, &q.front) != 0:
		x, q.front = q.front, x
		// The front it displaces may be of a group's time: there, not in
		// a second group of that time, which would leave the next time
		// (a ring's) no group but the heap.
		if q.toGroup(x.key, x.tie, x.ref) {
			return
		}
	}
	switch {
	case g0.n == 0:
		g0.key = x.key
		g0.insert(x.tie, x.ref)
	case g1.n == 0:
		g1.key = x.key
		g1.insert(x.tie, x.ref)
	default:
		q.heapPush(x)
	}
}

// toGroup inserts an entry of time key k in the group of that time, if one
// has it and room, and says whether it did.
func (q *eventQueue) toGroup(k, tie, ref uint64) bool {
	g0, g1 := &q.g[0], &q.g[1]
	switch {
	case g0.n > 0 && g0.key == k && g0.n < g0.room:
		g0.insert(tie, ref)
		return true
	case g1.n > 0 && g1.key == k && g1.n < g1.room:
		g1.insert(tie, ref)
		return true
	}
	return false
}

// next removes the earliest entry; the queue must not be empty.
func (q *eventQueue) next() qent {
	g0, g1 := &q.g[0], &q.g[1]
	g := g0
	if g0.n == 0 || g1.n != 0 && (g1.key < g0.key || g1.key == g0.key && g1.minTie < g0.minTie) {
		g = g1
	}
	// The heap's earliest: the front, else its root.
	var h *qent
	if q.hasFront {
		h = &q.front
	} else if len(q.h) > 0 {
		h = &q.h[0]
	}
	// (The ring of the look-ahead, while it holds entries, is compared
	// with the earliest of the rest: one test of its count in each branch.)
	if g.n == 0 || h != nil && (h.key < g.key || h.key == g.key && h.tie < g.minTie) {
		if q.ahead.n > 0 && q.aheadFirst(g, h, true) {
			return q.popAhead()
		}
		if q.hasFront {
			q.hasFront = false
			return q.front
		}
		return q.heapPop()
	}
	if q.ahead.n > 0 && q.aheadFirst(g, h, false) {
		return q.popAhead()
	}
	x := qent{key: g.key, tie: g.minTie}
	x.ref = g.pop()
	if g.n >= g.aheadAt && q.ahead.n == 0 && !q.noAhead {
		q.fillAhead(g)
	}
	return x
}

// hold parks op in a slot until take (any slot: see tryHold).
func (q *eventQueue) hold(op *Op) uint32 {
	if q.free.n > 0 {
		slot := q.free.pop()
		*q.slots.at(int32(slot)) = op
		return slot
	}
	return uint32(q.slots.push(op))
}

// tryHold is hold's common case, small enough to be inlined where every
// event is held (a ring's replay paid 3% more instructions for a call): a
// free slot in the first page. It reports whether it held op.
func (q *eventQueue) tryHold(op *Op) (uint32, bool) {
	free, slots := q.free.first, q.slots.first
	if n := q.free.n - 1; uint32(n) < uint32(len(free)) {
		if slot := free[n]; slot < uint32(len(slots)) {
			q.free.n = n
			slots[slot] = op
			return slot, true
		}
	}
	return 0, false
}

// slot returns the op parked in the slot an entry's ref names.
func (q *eventQueue) slot(ref uint64) *Op { return *q.slots.at(int32(uint32(ref))) }

// take returns the op parked in slot and frees the slot (any slot: see
// tryTake).
func (q *eventQueue) take(slot uint32) *Op {
	p := q.slots.at(int32(slot))
	op := *p
	*p = nil
	q.free.push(slot)
	return op
}

// tryTake is take's common case, inline as tryHold is: a slot of the first
// page, and room in the free list's first page.
func (q *eventQueue) tryTake(slot uint32) (*Op, bool) {
	free, slots, n := q.free.first, q.slots.first, q.free.n
	if slot < uint32(len(slots)) && uint32(n) < uint32(len(free)) {
		op := slots[slot]
		slots[slot] = nil
		free[n] = slot
		q.free.n = n + 1
		return op, true
	}
	return nil, false
}

// A tieGroup holds the entries of one time, ordered by tie. Ties are
// uniformly random, so their top bits spread the entries evenly over the
// buckets: with at least as many buckets as entries, a bucket holds one or
// two, kept sorted, and a three-level bitmap finds the first non-empty
// bucket in a few instructions. Insert and pop cost a constant expected time
// where a heap's cost grows with the log of its size. A whole all-to-all of
// 1024 ranks falls due at one time: a million completions (a heap of them
// costs twice the instructions, and a cache miss per level). Past binsAt
// entries, a group moves them to bins, which touch no random memory per
// entry (see tieBins): the buckets stay for the groups of a few thousand
// entries, which the caches hold.
//
// A bucket's least entry lives in the bucket itself, and only the others
// in chained nodes: most buckets hold one entry or none, so an insert or a
// pop mostly touches the bucket and the bitmap alone.
type tieGroup struct {
	key uint64 // the time, as timeKey
	n   int32
	// minTie is the least tie, in bucket minB (while n > 0).
	minTie, minB uint64
	shift        uint8 // 64 - log2(len(heads))
	// The bitmap has two levels up to 64*64 buckets: bit w of summary says
	// mid[w] != 0, bit k of mid[w] says heads[w<<6|k] is used. Past that, leaf
	// is set and adds a third: bit i of summary says mid[i] != 0, bit j of
	// mid[i] says leaf[i<<6|j] != 0, bit k of leaf[w] says heads[w<<6|k] is used.
	// (A ring's groups stay on two levels: a few instructions less a pop.)
	summary uint64
	mid     [64]uint64
	leaf    []uint64
	heads   []tieHead
	nodes   tieNodes // the rest of each bucket (node 0 stands for none)
	freeID  int32    // a free node, chained through next
	// most bounds the buckets (maxBuckets; a test sets fewer), and room,
	// 8 times it, the entries: past it, buckets would hold long chains, and
	// more entries of its time go to the heap instead.
	most int
	room int32
	// aheadAt is the size from which next looks ahead (see aheadShift).
	aheadAt int32
	// bins hold the entries instead of the buckets once the group has
	// grown to binsFrom entries (see tieBins), until it is empty again;
	// spare are the bins of an earlier time, for the next. binsFrom is
	// binsAt unless a test sets it.
	bins, spare *tieBins
	binsFrom    int
}

// tieHead is a bucket: its least entry, if used, and the chain of the
// others in tie order (0: none).
type tieHead struct {
	tie, ref uint64
	chain    int32
	used     bool
}

type tieNode struct {
	tie, ref uint64
	next     int32
}

const (
	minBuckets = 16           // small: an engine of a few ranks is made per explored seed
	maxBuckets = 64 * 64 * 64 // what the three-level bitmap covers
)

func (g *tieGroup) insert(tie, ref uint64) {
	if g.bins != nil {
		g.bins.insert(tie, ref)
		if g.n == 0 || tie < g.minTie {
			g.minTie = tie
		}
		g.n++
		return
	}
	if int(g.n) >= len(g.heads) {
		if g.grow(); g.bins != nil {
			g.insert(tie, ref)
			return
		}
	}
	b := tie >> g.shift
	if h := &g.heads[b]; !h.used {
		h.tie, h.ref, h.used = tie, ref, true
		g.mark(b)
	} else {
		g.chain(h, tie, ref)
	}
	if g.n == 0 || tie < g.minTie {
		g.minTie, g.minB = tie, b
	}
	g.n++
}

// chain adds an entry to the used bucket h, after its entries of smaller
// or equal ties.
func (g *tieGroup) chain(h *tieHead, tie, ref uint64) {
	if tie < h.tie {
		// The new least: the old one moves to the front of the chain.
		id := g.node(h.tie, h.ref)
		g.nodes.at(id).next = h.chain
		h.chain = id
		h.tie, h.ref = tie, ref
		return
	}
	id := g.node(tie, ref)
	p := &h.chain
	for *p != 0 && g.nodes.at(*p).tie <= tie {
		p = &g.nodes.at(*p).next
	}
	g.nodes.at(id).next = *p
	*p = id
}

// node returns a free node holding (tie, ref).
func (g *tieGroup) node(tie, ref uint64) int32 {
	if id := g.freeID; id != 0 {
		nd := g.nodes.at(id)
		g.freeID = nd.next
		*nd = tieNode{tie: tie, ref: ref}
		return id
	}
	return g.nodes.push(tieNode{tie: tie, ref: ref})
}

// mark sets bucket b's bits in the bitmap.
func (g *tieGroup) mark(b uint64) {
	w := b >> 6
	if g.leaf == nil {
		g.mid[w&63] |= 1 << (b & 63)
		g.summary |= 1 << (w & 63)
		return
	}
	if g.leaf[w] == 0 {
		i := (w >> 6) & 63
		g.mid[i] |= 1 << (w & 63)
		g.summary |= 1 << i
	}
	g.leaf[w] |= 1 << (b & 63)
}

// first returns the first non-empty bucket; the group must not be empty.
func (g *tieGroup) first() uint64 {
	i := uint64(bits.TrailingZeros64(g.summary))
	w := i<<6 | uint64(bits.TrailingZeros64(g.mid[i&63]))
	if g.leaf == nil {
		return w
	}
	return w<<6 | uint64(bits.TrailingZeros64(g.leaf[w]))
}

// pop removes the entry of the least tie and returns its ref.
func (g *tieGroup) pop() uint64 {
	if g.bins != nil {
		return g.popBin()
	}
	b := g.minB
	h := &g.heads[b]
	ref := h.ref
	g.n--
	if id := h.chain; id != 0 {
		// The chain's first is the bucket's next least, and the group's.
		nd := g.nodes.at(id)
		h.tie, h.ref, h.chain = nd.tie, nd.ref, nd.next
		nd.next = g.freeID
		g.freeID = id
		g.minTie = h.tie
		return ref
	}
	h.used = false
	w := b >> 6
	if g.leaf == nil {
		// Two levels: first's work inline, without its test of leaf.
		if g.mid[w&63] &^= 1 << (b & 63); g.mid[w&63] == 0 {
			g.summary &^= 1 << (w & 63)
		}
		if g.n > 0 {
			w = uint64(bits.TrailingZeros64(g.summary))
			g.minB = w<<6 | uint64(bits.TrailingZeros64(g.mid[w&63]))
			g.minTie = g.heads[g.minB].tie
		}
		return ref
	}
	if g.leaf[w] &^= 1 << (b & 63); g.leaf[w] == 0 {
		i := (w >> 6) & 63
		if g.mid[i] &^= 1 << (w & 63); g.mid[i] == 0 {
			g.summary &^= 1 << i
		}
	}
	if g.n > 0 {
		g.minB = g.first()
		g.minTie = g.heads[g.minB].tie
	}
	return ref
}

// grow doubles the buckets (up to most) and places the entries again.
func (g *tieGroup) grow() {
	if g.heads == nil {
		if g.most == 0 {
			g.most = maxBuckets
		}
		g.room = int32(8 * g.most)
		g.aheadAt = g.room >> aheadShift
		g.heads = make([]tieHead, minBuckets)
		g.nodes.push(tieNode{}) // node 0 stands for none
		g.shift = uint8(64 - bits.TrailingZeros(minBuckets))
		return
	}
	if len(g.heads) >= g.most {
		return // chains grow instead (up to 8 times most entries)
	}
	if from := cmp.Or(g.binsFrom, binsAt); 2*len(g.heads) >= from && g.most >= from {
		g.toBins()
		return
	}
	old, oldNodes := g.heads, g.nodes
	g.heads = make([]tieHead, 2*len(old))
	g.nodes = tieNodes{}
	g.nodes.push(tieNode{})
	g.freeID = 0
	if len(g.heads) > 64*64 {
		g.leaf = make([]uint64, len(g.heads)/64)
	}
	g.mid, g.summary = [64]uint64{}, 0
	g.shift--
	g.n = 0
	for i := range old {
		h := &old[i]
		if !h.used {
			continue
		}
		// In tie order: each lands last in its new bucket.
		g.insert(h.tie, h.ref)
		for id := h.chain; id != 0; id = oldNodes.at(id).next {
			nd := oldNodes.at(id)
			g.insert(nd.tie, nd.ref)
		}
	}
}

// toBins moves the group's entries to bins (see tieBins) and empties its
// buckets, which serve it again once the bins are empty.
func (g *tieGroup) toBins() {
	t := g.spare
	if t == nil {
		t = newTieBins()
	}
	g.spare = nil
	for i := range g.heads {
		h := &g.heads[i]
		if !h.used {
			continue
		}
		// In tie order: appends keep it.
		t.insert(h.tie, h.ref)
		for id := h.chain; id != 0; id = g.nodes.at(id).next {
			nd := g.nodes.at(id)
			t.insert(nd.tie, nd.ref)
		}
	}
	clear(g.heads)
	clear(g.leaf)
	g.nodes = tieNodes{}
	g.nodes.push(tieNode{})
	g.freeID = 0
	g.mid, g.summary = [64]uint64{}, 0
	g.bins = t
	g.room = math.MaxInt32 // (bins have no chains to keep short)
}

// popBin is pop of a group in bins.
func (g *tieGroup) popBin() uint64 {
	t := g.bins
	x := t.pop()
	if g.n--; g.n > 0 {
		g.minTie = t.least().tie
	} else {
		t.reset()
		g.bins, g.spare = nil, t
		g.room = int32(8 * g.most)
	}
	return x.ref
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

// before is 1 when a comes before b in (t, tie) order and 0 otherwise,
// computed without branches: the heap's child choices are coin flips
// (ties are random), which a branch predictor cannot learn.
func before(a, b *qent) uint64 {
	_, c := bits.Sub64(a.tie, b.tie, 0)
	_, c = bits.Sub64(a.key, b.key, c)
	return c
}

// heapPop removes the heap's earliest entry. The heap is 4-ary: half the
// levels of a binary one, and a node's children are adjacent in memory.
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
