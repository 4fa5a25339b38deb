package sim

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestWithdrawFromIndexedQueue: a cancel takes a receive out of the middle
// of an indexed posted queue (and of its key's FIFO, head, middle and tail
// alike); the receives left match as if it had never been posted.
func TestWithdrawFromIndexedQueue(t *testing.T) {
	q := newIndexed()
	var recvs []*Op
	for i := range 3 * smallQueue {
		src := 1 + i%3
		if i%5 == 0 {
			src = trace.AnySource
		}
		r := recvOp(uint64(i), src, i%2, 0)
		recvs = append(recvs, r)
		q.post(r)
	}
	if q.rk.posted.ix == nil {
		t.Fatal("the posted queue is not indexed")
	}
	gone := map[*Op]bool{}
	for _, i := range []int{1, 4, 7, 22, 0, 23} { // heads, middles and tails of FIFOs
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
	for i := range 4 * smallQueue {
		s := sendOp(uint64(i), 1+i%3, i%2, 0)
		want, got := lin.deliver(s), q.deliver(s)
		if want != got {
			t.Fatalf("send %d matched %s, want %s", i, name(got), name(want))
		}
	}
}
