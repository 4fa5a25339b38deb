package mpi

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestSyncOrder pins syncOrder: a matched message orders what its sender
// did before the send before what its receiver does after the receive,
// transitively through a third rank, and not the other way; a collective
// orders every member's before it before every member's after it; a rank
// that never gets its message goes on without that order.
func TestSyncOrder(t *testing.T) {
	mark := record{Type: recRMA, Op: rmaEpochEnd}
	send := func(to int32) record { return record{Type: recPost, Op: uint8(trace.OpSend), Peer: to} }
	recv := func(from int32) record { return record{Type: recPost, Op: uint8(trace.OpRecv), Peer: from} }
	done := record{Type: recDone}
	barrier := record{Type: recPost, Op: uint8(trace.OpBarrier), Count: 3}
	// link matches rank s's post si (a send) with rank r's post ri (a
	// receive, completed by the record after it).
	link := func(ranks []*rankData, s, si, r, ri int) {
		ranks[s].matchR[si], ranks[s].matchS[si] = int32(r), ranks[r].tseq[ri]
		ranks[r].matchR[ri], ranks[r].matchS[ri] = int32(s), ranks[s].tseq[si]
		ranks[r].doneOf[ri] = ranks[r].posts[ri] + 1
	}
	want := func(r int, p *record) bool { return p.Type == recRMA }

	// Rank 0 marks (0), sends to 1; rank 1 marks (0), receives, marks (3),
	// sends to 2, marks (5); rank 2 marks (0), receives, marks (3), then
	// waits for a message from rank 0 that never comes (unmatched: no
	// order) and marks (6).
	ranks := []*rankData{
		withPosts(0, []record{mark, send(1)}),
		withPosts(0, []record{mark, recv(0), done, mark, send(2), mark}),
		withPosts(0, []record{mark, recv(1), done, mark, recv(0), done, mark}),
	}
	link(ranks, 0, 0, 1, 0)
	link(ranks, 1, 1, 2, 0)
	o := newSyncOrder(ranks, want)
	for _, c := range []struct {
		x, y recRef
		want bool
	}{
		{recRef{0, 0}, recRef{1, 3}, true},  // through the message
		{recRef{0, 0}, recRef{2, 3}, true},  // through rank 1
		{recRef{1, 0}, recRef{0, 0}, false}, // nothing from 1 to 0
		{recRef{1, 3}, recRef{2, 3}, true},  // before rank 1's send
		{recRef{1, 5}, recRef{2, 6}, false}, // after it
		{recRef{0, 0}, recRef{2, 6}, true},
		{recRef{2, 0}, recRef{1, 3}, false},
		{recRef{2, 3}, recRef{2, 6}, true}, // one rank's order
	} {
		if got := o.before(c.x, c.y); got != c.want {
			t.Errorf("before(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}

	// A barrier of all three: every mark before it is before every mark
	// after it, and none after it before one before it.
	ranks = []*rankData{
		withPosts(0, []record{mark, barrier, mark}),
		withPosts(0, []record{mark, barrier, mark}),
		withPosts(0, []record{mark, barrier, mark}),
	}
	o = newSyncOrder(ranks, want)
	for x := range 3 {
		for y := range 3 {
			if x == y {
				continue
			}
			if !o.before(recRef{x, 0}, recRef{y, 2}) || o.before(recRef{x, 2}, recRef{y, 0}) || o.before(recRef{x, 0}, recRef{y, 0}) {
				t.Errorf("barrier: ranks %d and %d misordered", x, y)
			}
		}
	}
}
