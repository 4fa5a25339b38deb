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
