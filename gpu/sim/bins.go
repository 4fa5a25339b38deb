package sim

import (
	"math/bits"
	"slices"
)

// Bins of a large time group. The completions of a 1024-rank all-to-all, a
// million, fall due at one time: its group holds them all at its peak, and
// pops them once, in tie order, after all were queued. Filed in buckets
// by tie, each insert and pop visits a random bucket and the nodes of its
// chain: cache misses, a few an entry. So a group that grows past binsAt
// entries files them in bins instead: each bin holds the entries whose ties
// share their top binBits bits, appended as they come (a bin's end is in
// the cache: the 1,024 bins' ends take 64 KiB; 4,096 bins, whose ends
// the posts' other lines pushed out of the L2 cache, were 4-7% slower).
// Only when pops reach a bin is it sorted, by a counting sort on the tie's
// next bits (ties are uniformly random, so a bin's entries, a thousand at
// 1024 ranks, spread evenly) into the run, from which pops take entries in
// order. An entry queued into
// a bin that was already sorted (its tie is below the run's end) goes into
// the run in order.
//
// The order is the buckets': by tie, and equal ties in the order queued
// (appends, stable sorts and inserts after equal ties keep it), so the
// engine's results do not depend on which holds a group
// (TestTieBinsKeepTheOrder).
type tieBins struct {
	bins [binCount][]tieEnt
	used [binCount / 64]uint64 // bit b: bins[b] is not empty
	// run holds, sorted from pos, the entries of the bins up to cur (all
	// of whose bins are empty); cur is -1 before the first bin is taken.
	run []tieEnt
	pos int
	cur int
}

type tieEnt struct{ tie, ref uint64 }

const (
	binBits  = 10
	binCount = 1 << binBits
	binShift = 64 - binBits
	// subBits are the bits below a bin's that its counting sort orders by.
	subBits  = 8
	subShift = binShift - subBits
)

// binsAt is the size at which a group moves its entries to bins (when its
// buckets would double to it, at half as many entries): a ring's groups
// (one entry a rank) never get there, nor does a 64-rank all-to-all's
// (8 K completions), in the caches anyway. A 256-rank all-to-all's 65 K
// do: about the same time in bins as in buckets, where 1024 ranks gain
// a tenth.
const binsAt = 1 << 15

func newTieBins() *tieBins { return &tieBins{cur: -1} }

// empty says whether the bins hold no entry (then they may serve another
// group: see reset).
func (t *tieBins) empty() bool { return t.pos == len(t.run) && t.used == [binCount / 64]uint64{} }

// reset readies empty bins for another group.
func (t *tieBins) reset() { t.run, t.pos, t.cur = t.run[:0], 0, -1 }

// insert files an entry.
func (t *tieBins) insert(tie, ref uint64) {
	b := int(tie >> binShift)
	if b > t.cur {
		t.bins[b] = append(t.bins[b], tieEnt{tie, ref})
		t.used[b>>6] |= 1 << (b & 63)
		return
	}
	// Into the run, after the entries of smaller or equal ties.
	rest := t.run[t.pos:]
	i := t.pos + searchTie(rest, tie)
	if i == t.pos && t.pos > 0 {
		t.pos--
		t.run[t.pos] = tieEnt{tie, ref}
		return
	}
	t.run = slices.Insert(t.run, i, tieEnt{tie, ref})
}

// searchTie returns the index of the first entry of s (sorted) whose tie
// is above tie.
func searchTie(s []tieEnt, tie uint64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].tie <= tie {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// least returns the least entry; the bins must not be empty.
func (t *tieBins) least() tieEnt {
	if t.pos == len(t.run) {
		t.next()
	}
	return t.run[t.pos]
}

// pop removes the least entry and returns it; the bins must not be empty.
func (t *tieBins) pop() tieEnt {
	if t.pos == len(t.run) {
		t.next()
	}
	x := t.run[t.pos]
	t.pos++
	return x
}

// next makes the run of the next bin that holds entries (there must be
// one): its entries, sorted.
func (t *tieBins) next() {
	b := t.cur + 1
	w := b >> 6
	m := t.used[w] &^ (1<<(b&63) - 1)
	for m == 0 {
		w++
		m = t.used[w]
	}
	b = w<<6 | bits.TrailingZeros64(m)
	t.used[w] &^= 1 << (b & 63)
	t.cur = b
	in := t.bins[b]
	t.bins[b] = in[:0]
	t.run = sortTies(in, t.run[:0]) // (the run was all taken: its array is free)
	t.pos = 0
}

// sortTies returns the entries of in sorted by tie, stably, in out's array
// (grown as needed; not in's). The ties of a bin share their top
// binBits bits: a counting sort on the next subBits places them, and an
// insertion sort finishes each sub-bin (a few entries, as the ties are
// random). A bin whose ties are not spread (a test's) is sorted whole.
func sortTies(in, out []tieEnt) []tieEnt {
	n := len(in)
	out = slices.Grow(out[:0], n)[:n]
	if n <= 32 {
		copy(out, in)
		insertionSortTies(out)
		return out
	}
	if n > 64<<subBits {
		copy(out, in)
		slices.SortStableFunc(out, func(a, b tieEnt) int {
			switch {
			case a.tie < b.tie:
				return -1
			case a.tie > b.tie:
				return 1
			}
			return 0
		})
		return out
	}
	var start [1<<subBits + 1]int32
	for _, x := range in {
		start[(x.tie>>subShift)&(1<<subBits-1)+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	for _, x := range in {
		s := (x.tie >> subShift) & (1<<subBits - 1)
		out[start[s]] = x
		start[s]++
	}
	// Each entry moves past the few of its sub-bin above it.
	insertionSortTies(out)
	return out
}

// insertionSortTies sorts s by tie, stably.
func insertionSortTies(s []tieEnt) {
	for i := 1; i < len(s); i++ {
		x := s[i]
		j := i
		for j > 0 && s[j-1].tie > x.tie {
			s[j] = s[j-1]
			j--
		}
		s[j] = x
	}
}
