package replay

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
)

// TestRequestTableAgreesWithMap: whatever the ids (increasing, sparse,
// reused, long-lived, colliding in the table's slots), the table answers
// like a map.
func TestRequestTableAgreesWithMap(t *testing.T) {
	for _, sparse := range []bool{false, true} {
		requestTableAgreesWithMap(t, sparse)
	}
}

func requestTableAgreesWithMap(t *testing.T, sparse bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tab reqTable
	ref := map[uint64]*sim.Op{}
	live := []uint64{}
	next := uint64(1)
	ops := make([]sim.Op, 64)
	for i := range 200000 {
		switch k := rng.IntN(10); {
		case k < 4: // a new increasing id, sometimes a jump or a sparse handle
			id := next
			next++
			if rng.IntN(50) == 0 {
				next += uint64(rng.IntN(5000))
			}
			if sparse && rng.IntN(100) == 0 {
				id = rng.Uint64()
			}
			if rng.IntN(20) == 0 && len(live) > 0 {
				id = live[rng.IntN(len(live))] // put again: the new op replaces the old
				live = slices.DeleteFunc(live, func(x uint64) bool { return x == id })
			}
			op := &ops[i%len(ops)]
			tab.put(id, op)
			ref[id] = op
			live = append(live, id)
		case k < 8 && len(live) > 0: // retire the oldest or a random one
			j := 0
			if rng.IntN(3) == 0 {
				j = rng.IntN(len(live))
			}
			id := live[j]
			live = append(live[:j], live[j+1:]...)
			if rng.IntN(2) == 0 {
				tab.del(id)
			} else if got := tab.take(id); got != ref[id] {
				t.Fatalf("step %d: take(%d) = %p, want %p", i, id, got, ref[id])
			}
			delete(ref, id)
		default: // look up a live or an unknown id
			id := next + 3
			if len(live) > 0 && rng.IntN(2) == 0 {
				id = live[rng.IntN(len(live))]
			}
			got, ok := tab.get(id)
			want, wok := ref[id]
			if got != want || ok != wok {
				t.Fatalf("step %d: get(%d) = %p %v, want %p %v", i, id, got, ok, want, wok)
			}
		}
	}
	for id, want := range ref {
		if got, ok := tab.get(id); !ok || got != want {
			t.Fatalf("get(%d) lost", id)
		}
	}
}

// TestRequestTablePutAgainAfterCollision: an id put while its slot was
// taken, then put again once the slot is free, leaves no stale entry behind
// when it is retired.
func TestRequestTablePutAgainAfterCollision(t *testing.T) {
	var tab reqTable
	a, b, c := &sim.Op{Seq: 1}, &sim.Op{Seq: 2}, &sim.Op{Seq: 3}
	tab.put(1, a)
	tab.put(1+maxReqSlots, b) // the same slot, whatever the size: goes aside
	tab.del(1)
	tab.put(1+maxReqSlots, c) // put again: now in the slot
	if got := tab.take(1 + maxReqSlots); got != c {
		t.Fatalf("take = %v, want the op put last", got)
	}
	if got, ok := tab.get(1 + maxReqSlots); ok {
		t.Fatalf("retired id still maps to %v", got)
	}
}
