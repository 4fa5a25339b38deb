package sim

// tieNodes is a growable array of tie nodes whose elements never move:
// past its first page it grows a whole page at a time, where append would
// copy all it holds into an array twice the size. A time group of a
// 1024-rank all-to-all chains most of a million entries at its peak;
// growing its nodes by append cost a fresh process's replay 7% of its CPU
// time (the copies, and first touches of memory the next copy abandons).
// The first page grows as a slice does, so a small engine (one is made per
// explored seed) allocates little, and an index into it costs what a
// slice's does.
type tieNodes struct {
	first []tieNode           // nodes 0..pageLen-1
	rest  []*[pageLen]tieNode // the nodes from pageLen on, a page each
	n     int32
}

const (
	pageShift = 12
	pageLen   = 1 << pageShift
)

// at returns node i, which must be below n.
func (p *tieNodes) at(i int32) *tieNode {
	if uint32(i) < uint32(len(p.first)) {
		return &p.first[i]
	}
	return p.atRest(i)
}

func (p *tieNodes) atRest(i int32) *tieNode { return &p.rest[i>>pageShift-1][i&(pageLen-1)] }

// push appends x and returns its index.
func (p *tieNodes) push(x tieNode) int32 {
	i := p.n
	p.n++
	if i < pageLen {
		p.first = append(p.first, x)
		return i
	}
	if i&(pageLen-1) == 0 {
		p.rest = append(p.rest, new([pageLen]tieNode))
	}
	p.rest[i>>pageShift-1][i&(pageLen-1)] = x
	return i
}
