package sim

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestWithdrawFromIndexedQueue: a cancel takes a receive out of the middle
// of an indexed posted queue (and of its key's FIFO, head, middle and tail
// alike); the receives left match as if it had never been posted. With
// many sources, the keys are filed by source (bySrc) and, a second tag of
// a source, in the keyTable.
func TestWithdrawFromIndexedQueue(t *testing.T) {
	for _, c := range []struct {
		name         string
		ranks, srcs  int
		wantBySource bool
	}{{"few sources", 8, 3, false}, {"many sources", 64, 40, true}} {
		t.Run(c.name, func(t *testing.T) {
			withdrawFromIndexed(t, c.ranks, c.srcs, c.wantBySource)
		})
	}
}

func withdrawFromIndexed(t *testing.T, ranks, srcs int, wantBySource bool) {
	q := newIndexedOf(ranks)
	var recvs []*Op
	n := max(3*smallQueue, 3*srcs)
	for i := range n {
		src := 1 + i%srcs
		if i%5 == 0 {
			src = trace.AnySource
		}
		r := recvOp(uint64(i), src, (i/srcs)%2, 0)
		recvs = append(recvs, r)
		q.post(r)
	}
	if q.rk.posted.ix == nil {
		t.Fatal("the posted queue is not indexed")
	}
	if got := q.rk.posted.ix.bySrc != nil; got != wantBySource {
		t.Fatalf("keys filed by source: %v, want %v", got, wantBySource)
	}
	gone := map[*Op]bool{}
	for _, i := range []int{1, 4, 7, 22, 0, 23, n - 1, n / 2, srcs + 2} { // heads, middles and tails of FIFOs
		if gone[recvs[i]] {
			continue
		}
		if !q.e.withdrawRecv(q.rk, recvs[i]) {
			t.Fatalf("receive %d not withdrawn", i)
		}
		gone[recvs[i]] = true
		if q.e.withdrawRecv(q.rk, recvs[i]) {
			t.Fatalf("receive %d withdrawn twice", i)
		}
	}
	var lin linearQueues
	for _, r := range recvs {
		if !gone[r] {
			lin.post(r)
		}
	}
	for i := range n + smallQueue {
		s := sendOp(uint64(i), 1+i%srcs, (i/srcs)%2, 0)
		want, got := lin.deliver(s), q.deliver(s)
		if want != got {
			t.Fatalf("send %d matched %s, want %s", i, name(got), name(want))
		}
	}
}
