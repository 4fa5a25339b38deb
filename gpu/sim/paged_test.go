package sim

import "testing"

// TestTieNodesNeverMove: nodes pushed across several pages read back as
// pushed, and a node's address does not change as the array grows (the
// point of paging: append would have moved them all).
func TestTieNodesNeverMove(t *testing.T) {
	var p tieNodes
	const n = 3*pageLen + 17
	var addrs []*tieNode
	for i := range int32(n) {
		if got := p.push(tieNode{tie: uint64(i), ref: uint64(i) << 8, next: i}); got != i {
			t.Fatalf("push %d returned index %d", i, got)
		}
		if i >= pageLen && i%pageLen == 0 {
			// Every earlier address is still the node's (checked below).
			addrs = append(addrs, p.at(i-1))
		}
	}
	if p.n != n {
		t.Fatalf("n = %d, want %d", p.n, n)
	}
	for i := range int32(n) {
		nd := p.at(i)
		if nd.tie != uint64(i) || nd.ref != uint64(i)<<8 || nd.next != i {
			t.Fatalf("node %d reads %+v", i, *nd)
		}
	}
	for k, a := range addrs {
		if i := int32(k+1)*pageLen - 1; p.at(i) != a {
			t.Fatalf("node %d moved", i)
		}
	}
}

// TestPagedPopsAndReuses: a paged array used as a stack (the event
// queue's free slots) pops in reverse order, zeroes what it popped, and
// pushes again into the pages it has, across page boundaries.
func TestPagedPopsAndReuses(t *testing.T) {
	var p paged[*int]
	vals := make([]int, 2*pageLen+5)
	for i := range vals {
		vals[i] = i
		p.push(&vals[i])
	}
	pages := len(p.rest)
	for i := len(vals) - 1; i >= pageLen-3; i-- {
		if got := p.pop(); got != &vals[i] {
			t.Fatalf("pop %d returned %v, want element %d", len(vals)-1-i, got, i)
		}
	}
	if p.n != pageLen-3 || *p.at(p.n - 1) != &vals[pageLen-4] {
		t.Fatalf("after the pops n = %d", p.n)
	}
	if p.first[pageLen-3] != nil || p.rest[0][0] != nil {
		t.Fatalf("popped elements not zeroed")
	}
	for i := pageLen - 3; i < len(vals); i++ {
		if got := p.push(&vals[i]); got != int32(i) {
			t.Fatalf("push returned %d, want %d", got, i)
		}
	}
	if len(p.rest) != pages || len(p.first) != pageLen {
		t.Fatalf("pushing again grew the pages: %d pages (had %d), first page %d long", len(p.rest), pages, len(p.first))
	}
	for i := range vals {
		if *p.at(int32(i)) != &vals[i] {
			t.Fatalf("element %d reads %v", i, *p.at(int32(i)))
		}
	}
}
