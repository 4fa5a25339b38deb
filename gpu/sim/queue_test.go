package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// entry is what the test pushes: a time, a tie and what the entry carries.
type entry struct {
	t    int64
	tie  uint64
	kind evKind
	rank int // of a resume
	op   *Op // of an arrival or a completion
}

func qpush(q *eventQueue, x entry) {
	if x.kind == evResume {
		q.add(x.t, x.tie, uint64(evResume)<<32|uint64(x.rank))
		return
	}
	q.add(x.t, x.tie, uint64(x.kind)<<32|uint64(q.hold(x.op)))
}

func qpop(q *eventQueue) entry {
	x := q.next()
	e := entry{t: x.time(), tie: x.tie, kind: x.kind()}
	if e.kind == evResume {
		e.rank = int(x.slot())
	} else {
		e.op = q.take(x.slot())
	}
	return e
}

// TestEventQueuePopsInTimeThenTieOrder: the queue is a min-queue on
// (t, tie), whatever the order of pushes and pops, negative times included,
// and gives back what each entry carries.
func TestEventQueuePopsInTimeThenTieOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var q eventQueue
	var ref []entry
	key := func(a, b entry) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		case a.tie < b.tie:
			return -1
		case a.tie > b.tie:
			return 1
		}
		return 0
	}
	now := int64(-50)
	for i := range 20000 {
		if rng.IntN(3) > 0 || len(ref) == 0 {
			x := entry{t: now + int64(rng.IntN(4))*7, tie: rng.Uint64()>>uint(rng.IntN(33))<<31 | uint64(i), kind: evKind(i % 3)} // unique ties
			if x.kind == evResume {
				x.rank = i
			} else {
				x.op = &Op{Rank: int32(i)}
			}
			qpush(&q, x)
			ref = append(ref, x)
			continue
		}
		j := 0
		for k := range ref {
			if key(ref[k], ref[j]) < 0 {
				j = k
			}
		}
		got := qpop(&q)
		if got != ref[j] {
			t.Fatalf("pop %d: got %+v, want %+v", i, got, ref[j])
		}
		ref = slices.Delete(ref, j, j+1)
		now = got.t
		if q.len() > 0 && q.minTime() != slices.MinFunc(ref, key).t {
			t.Fatal("minTime is not the earliest time")
		}
	}
}

// BenchmarkEventQueue pops and pushes on a queue of 2048 entries, as a
// 1024-rank replay does (completions and resumes, mostly at equal times).
func BenchmarkEventQueue(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q eventQueue
	var dummy Op
	for i := range 2048 {
		qpush(&q, entry{t: int64(i % 2), tie: rng.Uint64(), kind: evComplete, op: &dummy})
	}
	for b.Loop() {
		x := qpop(&q)
		qpush(&q, entry{t: x.t + int64(rng.IntN(2)), tie: rng.Uint64(), kind: evComplete, op: &dummy})
	}
}

// TestEventQueueManyAtOneTime: tens of thousands of entries of one time
// (ranks in step), with uniformly random ties as the engine draws them,
// come out in (time, tie) order: the time groups grow to their most buckets
// (lowered here to two words of the bitmap's middle level, so that the test
// stays small), and past their bound the heap takes the rest. The oracle is
// the 4-ary heap alone, which the test above checks against a linear scan.
func TestEventQueueManyAtOneTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var q, oracle eventQueue
	const most = 2 * 64 * 64
	q.g[0].most, q.g[1].most = most, most
	const groupMax = 8 * most
	push := func(tm int64, i int) {
		x := qent{key: timeKey(tm), tie: rng.Uint64(), ref: uint64(evResume)<<32 | uint64(uint32(i))}
		q.add(tm, x.tie, x.ref)
		oracle.heapPush(x)
	}
	for i := range 3 * groupMax {
		push(100+int64(i%2)*50, i)
	}
	if len(q.h) == 0 || len(q.g[0].heads) != most || len(q.g[1].heads) != most {
		t.Fatalf("heap %d entries, group buckets %d and %d: the test does not reach the bounds", len(q.h), len(q.g[0].heads), len(q.g[1].heads))
	}
	for n := 0; q.len() > 0; n++ {
		if n%3 == 0 && n < 4*groupMax {
			// A rank resumed at the current time: its tie is anywhere.
			push(q.minTime(), 3*groupMax+n)
		}
		got, want := q.next(), oracle.heapPop()
		if got != want {
			t.Fatalf("pop %d: got %+v, want %+v", n, got, want)
		}
	}
	if len(oracle.h) != 0 {
		t.Fatalf("the queue is empty, the oracle holds %d", len(oracle.h))
	}
}

// TestEventQueueFrontJoinsItsGroup: an entry that displaces the front
// sends the old front to the group of its time, not to a second group of
// that time; so a ring in step, whose entries are of two times at once (the
// one being processed and the next), keeps them all out of the heap.
func TestEventQueueFrontJoinsItsGroup(t *testing.T) {
	var q eventQueue
	q.add(20, 500, 1) // the front
	q.add(20, 600, 2) // a group of time 20
	q.add(10, 900, 3) // an earlier entry displaces the front, which joins that group
	q.add(30, 100, 4) // the next time: the other group
	q.add(30, 200, 5)
	if len(q.h) != 0 {
		t.Fatalf("the heap holds %d entries, want none", len(q.h))
	}
	var got []uint64
	for q.len() > 0 {
		got = append(got, q.next().ref)
	}
	if want := []uint64{3, 1, 2, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("popped %v, want %v", got, want)
	}
}

// TestEventQueueLookAheadKeepsOrder: the look-ahead (see lookAhead)
// does not change the order of pops. Two queues get the same entries, one
// with look-ahead, one without: tens of thousands of one time and, between
// pops, more of the current time (anywhere among those the ring holds).
// Ties are drawn from a small range: many share a bucket, and many are
// equal: those queued later are popped later, the ring's included. The
// groups' bounds are lowered (and with them the size from which they look
// ahead). With entries of later and earlier times too, some are in the
// heap (in the last case, past the bounds) or the front, and which of two
// equal ties in two structures comes first depends on the structures:
// there the ties are distinct, as the engine's random ones are but with
// odds of 2^-64 a pair.
func TestEventQueueLookAheadKeepsOrder(t *testing.T) {
	for _, c := range []struct {
		name  string
		most  int
		later bool // entries of other times, and distinct ties
	}{{"equal ties", 2 * 64 * 64, false}, {"other times", 2 * 64 * 64, true}, {"other times and the heap", 64 * 64 / 2, true}} {
		t.Run(c.name, func(t *testing.T) { lookAheadKeepsOrder(t, c.most, c.later) })
	}
}

func lookAheadKeepsOrder(t *testing.T, most int, later bool) {
	rng := rand.New(rand.NewPCG(7, 8))
	var q, ref eventQueue
	ref.noAhead = true
	for _, x := range []*eventQueue{&q, &ref} {
		x.g[0].most, x.g[1].most = most, most
	}
	var op Op
	push := func(tm int64, i int) {
		tie := uint64(rng.IntN(1<<16)) << 48
		if later {
			tie |= uint64(i)
		}
		addBoth(&q, &ref, tm, tie, i, &op)
	}
	const many = 12 * 64 * 64
	for i := range many {
		tm := int64(100)
		if later && i%16 == 15 {
			tm = 150
		}
		push(tm, i)
	}
	looked := 0
	for n := 0; q.len() > 0; n++ {
		switch {
		case n%3 == 0 && n < 2*many:
			push(q.minTime(), many+n)
		case later && n%7 == 0 && n < 2*many:
			push(q.minTime()+int64(rng.IntN(3))*50, many+n)
		case later && (n%101 == 0 || n%4 == 0 && q.ahead.n > 0 && q.g[q.ahead.src].n == 0):
			// Earlier times (the queue allows it; the engine never goes
			// back): the first to the front, the second displaces it to
			// the heap or an empty group (the one the ring's entries came
			// from, while they are the last of its time).
			push(q.minTime()-50, 3*many+2*n)
			push(q.minTime()-50, 3*many+2*n+1)
		}
		if q.ahead.n > 0 {
			looked++
		}
		nextBoth(t, n, &q, &ref, "without look-ahead")
	}
	if looked < many {
		t.Fatalf("the ring held entries at %d pops: the test does not exercise the look-ahead", looked)
	}
}

// addBoth queues entry i (its kind is i%3, a resume's rank i) in q and
// ref alike.
func addBoth(q, ref *eventQueue, tm int64, tie uint64, i int, op *Op) {
	kind := evKind(i % 3)
	for _, x := range []*eventQueue{q, ref} {
		if kind == evResume {
			x.add(tm, tie, uint64(kind)<<32|uint64(uint32(i)))
		} else {
			x.add(tm, tie, uint64(kind)<<32|uint64(x.hold(op)))
		}
	}
}

// nextBoth pops q and ref (whose structures refName says) and fails pop
// n unless both give the same entry, slot included (both hold and take
// alike), and are left with the same length and earliest time.
func nextBoth(t *testing.T, n int, q, ref *eventQueue, refName string) {
	t.Helper()
	got, want := q.next(), ref.next()
	if got != want {
		t.Fatalf("pop %d: got %+v, want %+v", n, got, want)
	}
	if got.kind() != evResume {
		q.take(got.slot())
		ref.take(want.slot())
	}
	if q.len() != ref.len() || q.len() > 0 && q.minTime() != ref.minTime() {
		t.Fatalf("pop %d: length %d, min time %d; %s %d, %d", n, q.len(), q.minTime(), refName, ref.len(), ref.minTime())
	}
}

// postAllToAll makes rank r of an n-rank all-to-all post its sends to
// every other rank, then its receives from every other rank (from any
// rank, with anySource), each 64 bytes with a request, and returns ops
// with them appended.
func postAllToAll(e *Engine, r, n int, anySource bool, ops []*Op) []*Op {
	for k := 1; k < 2*n-1; k++ {
		op := e.NewOp(r, trace.OpIsend)
		op.Peer, op.Bytes = int32((r+k)%n), 64
		if k >= n {
			op.Kind, op.Peer = trace.OpIrecv, int32((r-k+2*n-1)%n)
			if anySource {
				op.Peer = trace.AnySource
			}
		}
		e.NewRequest(op)
		if k < n {
			e.PostSend(op)
		} else {
			e.PostRecv(op)
		}
		ops = append(ops, op)
	}
	return ops
}

// BenchmarkCompletionsAllToAll times what follows the posts of an
// all-to-all (every rank Isends to and Irecvs from all others, then
// Waitall): the completions of all its messages, which fall due at one
// time (a million at 1024 ranks, their ops out of the caches: see
// lookAhead), and each rank's release of its ops and Finalize. The posts
// are not timed.
func BenchmarkCompletionsAllToAll(b *testing.B) {
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) {
			var msgs int
			for range b.N {
				b.StopTimer()
				e := New(Config{Ranks: n, EagerLimit: -1})
				ops := make([][]*Op, n)
				posted := 0
				for {
					r, ok := e.Next()
					if !ok {
						break
					}
					if ops[r] == nil {
						ops[r] = postAllToAll(e, r, n, false, nil)
						w := e.NewOp(r, trace.OpWaitall)
						w.SetReqs(ops[r])
						if e.Block(w, ops[r], false) {
							b.Fatal("the Waitall did not block")
						}
						if posted++; posted == n {
							b.StartTimer()
						}
						continue
					}
					for _, op := range ops[r] {
						e.Release(op)
					}
					e.Finalize(e.NewOp(r, trace.OpFinalize))
				}
				if e.Stuck() || len(e.Problems()) != 0 {
					b.Fatalf("stuck %v, %d problems", e.Stuck(), len(e.Problems()))
				}
				msgs += n * (n - 1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs), "ns/msg")
		})
	}
}

// TestTiesAreTheGeneratorsDraws: New's resumes take the seeded
// generator's first ties (one per rank), in order, and every later event
// the next, whatever the structure that holds it: a seed's run is the run
// it always was.
func TestTiesAreTheGeneratorsDraws(t *testing.T) {
	const ranks, seed = 3, 11
	e := New(Config{Ranks: ranks, Seed: seed})
	ref := rand.NewPCG(seed, 0x9e3779b97f4a7c15)
	var resumes []uint64
	for range ranks {
		resumes = append(resumes, ref.Uint64())
	}
	slices.Sort(resumes)
	var got []uint64
	for e.queue.len() > 0 {
		x := e.queue.next()
		got = append(got, x.tie)
	}
	if !slices.Equal(got, resumes) {
		t.Fatalf("the resumes New queued have ties %x, want the generator's first %d, %x", got, ranks, resumes)
	}
	for i := range 8 {
		e.pushResume(0, 0)
		if got, want := e.queue.next().tie, ref.Uint64(); got != want {
			t.Fatalf("draw %d: tie %x, want the generator's %x", ranks+i, got, want)
		}
	}
}
