package sim

import (
	"unsafe"

	"github.com/p2ptrace/p2ptrace/internal/cacheline"
)

// Look-ahead. A replay of many ranks has millions of ops live at once, and
// a large group of one time (the completions of a 1024-rank all-to-all)
// pops them in random order: each event's op, the slot that holds it and
// the op it matched are out of the caches. An event's work is hundreds of
// instructions, so the processor never reaches the next event's loads while
// the present one's are pending: the misses are paid one after the other. So the
// queue pops the entries of a large group a few events early into a ring,
// in order, and loads what they will need in stages as they move along it
// (their slot, then their op, then the op it matched): several misses in
// flight at once, whose results later events find in the cache.
//
// The ring is part of the order, not a cache of it: its entries are the
// least of their group when popped, and next serves its head only when no
// entry queued since is earlier (aheadFirst); a group's entry joins the
// ring only if it is not earlier than the ring's last. So the order is the
// same with or without look-ahead (TestEventQueueLookAheadKeepsOrder; but
// for two entries of equal time and tie in two structures, which the
// structures order either way: the engine's ties are 64 random bits); an
// entry queued before the ring's entries costs only the loads made for them
// early.
//
// Each stage is a prefetch (PREFETCHT0: see package cacheline), not a load: a load
// that misses holds up the instructions after it once the processor's
// window of instructions in flight fills, and an event's work is longer
// than that window, so the loads the stages made until 2026-12-06 (a word
// added to a sink) were paid in part as the misses they were to hide. Only
// a stage that needs the line's content (the op's address in the slot, the
// matched op's address in the op) reads it, a few events after the stage
// before it asked for it.
type lookAhead struct {
	// The entries, in order from head: all of time key (timeKey), the
	// group's that src names (its index in eventQueue.g).
	ties, refs [aheadLen]uint64
	key        uint64
	head, n    uint32
	src        uint8
	// last is the tie of the entry that joined the ring last: a group's
	// entry joins after it only if its tie is not smaller.
	last uint64
}

const (
	// aheadLen is how many events early the ring pops an entry and
	// prefetches its slot; its op is prefetched aheadOp events before it is
	// processed, the op it matched at aheadMatch: each stage's miss is over
	// before the next stage reads its result. (A power of two.)
	aheadLen   = 16
	aheadOp    = 8
	aheadMatch = 4
	// A group looks ahead from a sixteenth of its bound (room) on: 131072
	// entries at the default bound, whose ops and matched ops take 64 MB,
	// out of the L2 cache and mostly out of the L3 (a test that lowers the
	// bound lowers it too). A 1024-rank all-to-all's million completions
	// gain (Engine.Next's CPU time drops by a fifth to a quarter); a
	// 256-rank one's 65280, in L3, gained nothing measurable for ~150
	// instructions each; a ring's 1024 entries of a time would only pay.
	aheadShift = 4
)

// aheadFirst says whether the ring's head comes before the earliest entry
// outside it: h (the heap's earliest, or nil) if heap, else group g's
// least. (The ring's entries come first among equal times and ties: they
// were queued before.)
func (q *eventQueue) aheadFirst(g *tieGroup, h *qent, heap bool) bool {
	a := &q.ahead
	tie := a.ties[a.head]
	if heap {
		return h == nil || h.key > a.key || h.key == a.key && h.tie >= tie
	}
	return a.key < g.key || a.key == g.key && tie <= g.minTie
}

// fillAhead starts the look-ahead on group g, which next just popped:
// its next aheadLen entries go to the (empty) ring.
func (q *eventQueue) fillAhead(g *tieGroup) {
	a := &q.ahead
	a.src = 0
	if g == &q.g[1] {
		a.src = 1
	}
	a.key, a.head = g.key, 0
	for a.n < aheadLen && g.n > 0 {
		q.pushAhead(g)
	}
}

// pushAhead moves group g's least entry to the ring's end and prefetches
// its slot; g must not be empty, and of the ring's time.
func (q *eventQueue) pushAhead(g *tieGroup) {
	a := &q.ahead
	i := (a.head + a.n) & (aheadLen - 1)
	tie := g.minTie
	ref := g.pop()
	a.ties[i], a.refs[i], a.last = tie, ref, tie
	a.n++
	if evKind(ref>>32) != evResume {
		cacheline.Prefetch(unsafe.Pointer(q.slots.at(int32(uint32(ref)))))
	}
}

// popAhead removes the ring's head (aheadFirst said it is the earliest),
// tops the ring up from its group and advances the prefetches of its entries.
func (q *eventQueue) popAhead() qent {
	a := &q.ahead
	x := qent{key: a.key, tie: a.ties[a.head], ref: a.refs[a.head]}
	a.head = (a.head + 1) & (aheadLen - 1)
	a.n--
	// The group's least joins the ring if it is not earlier than the ring's
	// last (else next serves it from the group in its turn). The ring keeps
	// to one time: then ties alone order its entries.
	g := &q.g[a.src]
	for a.n < aheadLen && g.n > 0 && g.key == a.key && g.minTie >= a.last {
		q.pushAhead(g)
	}
	if a.n > aheadOp {
		if ref := a.refs[(a.head+aheadOp)&(aheadLen-1)]; evKind(ref>>32) != evResume {
			cacheline.Prefetch(unsafe.Pointer(q.slot(ref)))
		}
	}
	if a.n > aheadMatch {
		if ref := a.refs[(a.head+aheadMatch)&(aheadLen-1)]; evKind(ref>>32) == evComplete {
			if m := q.slot(ref).match; m != nil {
				cacheline.Prefetch(unsafe.Pointer(m))
			}
		}
	}
	return x
}
