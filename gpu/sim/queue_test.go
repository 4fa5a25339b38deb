package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEventQueuePopsInTimeThenTieOrder: the queue is a min-queue on
// (t, tie), whatever the order of pushes and pops, negative times included.
func TestEventQueuePopsInTimeThenTieOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var q eventQueue
	var ref []event
	key := func(a, b event) int {
		switch {
		case a.t != b.t:
			return cmpInt(a.t, b.t)
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
			ev := event{op: &Op{Rank: i}, kind: evKind(i % 3), t: now + int64(rng.IntN(4))*7, tie: rng.Uint64()>>uint(rng.IntN(33))<<31 | uint64(i), rank: int32(i)} // unique ties
			q.push(ev)
			ref = append(ref, ev)
			continue
		}
		j := 0
		for k := range ref {
			if key(ref[k], ref[j]) < 0 {
				j = k
			}
		}
		got := q.pop()
		if ref[j].kind != evResume {
			ref[j].rank = 0
		} else {
			ref[j].op = nil
		}
		if got != ref[j] {
			t.Fatalf("pop %d: got (%d, %d), want (%d, %d)", i, got.t, got.tie, ref[j].t, ref[j].tie)
		}
		ref = slices.Delete(ref, j, j+1)
		now = got.t
		if q.len() > 0 && q.minTime() != slices.MinFunc(ref, key).t {
			t.Fatal("minTime is not the earliest time")
		}
	}
}

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	return 1
}

// BenchmarkEventQueue pops and pushes on a queue of 2048 events, as a
// 1024-rank replay does (completions and resumes, mostly at equal times).
func BenchmarkEventQueue(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q eventQueue
	var dummy Op
	for i := range 2048 {
		q.push(event{t: int64(i % 2), tie: rng.Uint64(), kind: evComplete, op: &dummy})
	}
	for b.Loop() {
		ev := q.pop()
		q.push(event{t: ev.t + int64(rng.IntN(2)), tie: rng.Uint64(), kind: evKind(rng.IntN(2)), op: &dummy})
	}
}
