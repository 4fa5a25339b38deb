package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestTieBinsKeepTheOrder: a queue whose large groups move to bins (see
// tieBins) pops exactly what one whose groups stay in buckets pops, with
// the look-ahead on in both: tens of thousands of entries of one time, and
// between pops more of the current time (in bins already sorted, and not),
// of later times, and earlier ones. Ties are random 64-bit numbers; or
// drawn from a small range, so that many are equal (equal ties pop in the
// order queued); or all in one bin, more than its counting sort takes
// (sorted whole: see sortTies).
func TestTieBinsKeepTheOrder(t *testing.T) {
	for _, c := range []struct {
		name     string
		tie      func(rng *rand.Rand) uint64
		binsFrom int
		many     int
	}{
		{"random ties", func(rng *rand.Rand) uint64 { return rng.Uint64() }, 1024, 3 << 15},
		{"random ties, the default size", func(rng *rand.Rand) uint64 { return rng.Uint64() }, 0, binsAt},
		{"equal ties", func(rng *rand.Rand) uint64 { return uint64(rng.IntN(1<<10)) << 54 }, 1024, 3 << 15},
		{"one bin", func(rng *rand.Rand) uint64 { return rng.Uint64() >> binBits }, 1024, 64<<subBits + 4096},
	} {
		t.Run(c.name, func(t *testing.T) { binsKeepOrder(t, c.tie, c.binsFrom, c.many) })
	}
}

func binsKeepOrder(t *testing.T, tieOf func(*rand.Rand) uint64, binsFrom, many int) {
	rng := rand.New(rand.NewPCG(5, 6))
	var q, ref eventQueue
	for i := range q.g {
		q.g[i].binsFrom = binsFrom
		ref.g[i].binsFrom = 1 << 40 // never
	}
	var op Op
	push := func(tm int64, i int) { addBoth(&q, &ref, tm, tieOf(rng), i, &op) }
	for i := range many {
		push(100, i)
	}
	binned := 0
	for n := 0; q.len() > 0; n++ {
		switch {
		case n%3 == 0 && n < 2*many:
			push(q.minTime(), many+n)
		case n%11 == 0 && n < 2*many:
			push(q.minTime()+50, many+n)
		case n%997 == 0:
			push(q.minTime()-50, 3*many+n) // (earlier: the queue allows it)
		}
		if q.g[0].bins != nil || q.g[1].bins != nil {
			binned++
		}
		nextBoth(t, n, &q, &ref, "in buckets")
	}
	if binned < many {
		t.Fatalf("bins held the entries at %d pops: the test does not exercise them", binned)
	}
	for i := range q.g {
		if g := &q.g[i]; g.bins != nil || g.n != 0 {
			t.Fatalf("group %d: %d entries, bins %v once the queue is empty", i, g.n, g.bins != nil)
		}
	}
}

// TestSortTiesIsStable: sortTies orders by tie and keeps the order of
// equal ties, for spread ties, crowded ones, a bin too small for a
// counting sort and one too large for it.
func TestSortTiesIsStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name string
		n    int
		tie  func() uint64
	}{
		{"spread", 500, func() uint64 { return rng.Uint64() >> binBits }},
		{"small", 30, func() uint64 { return uint64(rng.IntN(10)) }},
		{"crowded", 500, func() uint64 { return uint64(rng.IntN(8)) << subShift }},
		{"large", 64<<subBits + 1, func() uint64 { return uint64(rng.IntN(100)) }},
	} {
		in := make([]tieEnt, c.n)
		for i := range in {
			in[i] = tieEnt{tie: c.tie(), ref: uint64(i)}
		}
		want := slices.Clone(in)
		slices.SortStableFunc(want, func(a, b tieEnt) int {
			if a.tie != b.tie {
				if a.tie < b.tie {
					return -1
				}
				return 1
			}
			return 0
		})
		if got := sortTies(in, nil); !slices.Equal(got, want) {
			t.Errorf("%s: not the stable order", c.name)
		}
	}
}

// TestBinsChangeNoMatch: an engine whose big time groups go to bins matches
// what one whose groups stay in buckets matches, where the order of
// same-time events decides: 128 ranks each post 127 AnySource receives and
// send to every other rank, then wait for all, three times over (each
// round's 16 K completions and arrivals fall due at one time), and every
// receive's sender is compared.
func TestBinsChangeNoMatch(t *testing.T) {
	const n, rounds = 128, 3
	run := func(bins bool) []int32 {
		e := New(Config{Ranks: n, Seed: 9})
		if !bins {
			for i := range e.queue.g {
				e.queue.g[i].binsFrom = 1 << 40
			}
		} else {
			for i := range e.queue.g {
				e.queue.g[i].binsFrom = 1024
			}
		}
		var got []int32
		done := make([]int, n)
		ops := make([][]*Op, n)
		for {
			r, ok := e.Next()
			if !ok {
				break
			}
			for _, op := range ops[r] {
				if op.Kind == trace.OpIrecv {
					got = append(got, int32(r), op.Source)
				}
				e.Release(op)
			}
			ops[r] = ops[r][:0]
			if done[r] == rounds {
				e.Finalize(e.NewOp(r, trace.OpFinalize))
				continue
			}
			done[r]++
			ops[r] = postAllToAll(e, r, n, true, ops[r])
			w := e.NewOp(r, trace.OpWaitall)
			w.SetReqs(ops[r])
			e.Block(w, ops[r], false)
		}
		if e.Stuck() {
			t.Fatalf("bins %v: stuck", bins)
		}
		return got
	}
	inBuckets, inBins := run(false), run(true)
	if len(inBuckets) != 2*n*(n-1)*rounds {
		t.Fatalf("%d receives, want %d", len(inBuckets)/2, n*(n-1)*rounds)
	}
	if !slices.Equal(inBins, inBuckets) {
		i := 0
		for i < len(inBins) && i < len(inBuckets) && inBins[i] == inBuckets[i] {
			i++
		}
		t.Fatalf("the matches differ from receive %d on", i/2)
	}
}
