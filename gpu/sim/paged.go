package sim

// paged is a growable array whose elements never move: past its first page
// it grows a whole page at a time, where append would copy all it holds into
// an array twice the size. A time group of a 1024-rank all-to-all chains
// most of a million entries at its peak, and parks as many ops in the event
// queue's slots; growing those by append cost a fresh process's replay 7%
// of its CPU time each (the copies, and first touches of memory the next
// copy abandons). The first page grows as a slice does, so a small engine
// (one is made per explored seed) allocates little, and an index into it
// costs what a slice's does. It shrinks from the end (pop) and keeps its
// pages for the next pushes.
type paged[T any] struct {
	first []T           // elements 0..pageLen-1 (its length may pass n: room for the next)
	rest  []*[pageLen]T // the elements from pageLen on, a page each
	n     int32
}

const (
	pageShift = 12
	pageLen   = 1 << pageShift
)

// tieNodes are the chained nodes of a time group's buckets.
type tieNodes = paged[tieNode]

// at returns element i, which must be below n.
func (p *paged[T]) at(i int32) *T {
	if uint32(i) < uint32(len(p.first)) {
		return &p.first[i]
	}
	return p.atRest(i)
}

func (p *paged[T]) atRest(i int32) *T { return &p.rest[i>>pageShift-1][i&(pageLen-1)] }

// push appends x and returns its index. Its common case is small enough
// to be inlined: an element of the first page, which after a pop, or once
// the first page's array has room, is there already.
func (p *paged[T]) push(x T) int32 {
	if i := p.n; uint32(i) < uint32(len(p.first)) {
		p.first[i] = x
		p.n++
		return i
	}
	return p.pushMore(x)
}

// pushMore is push's other cases: it grows the first page as a slice grows
// (and takes the whole of the array append made), then a page at a time.
func (p *paged[T]) pushMore(x T) int32 {
	i := p.n
	p.n++
	if i < pageLen {
		p.first = append(p.first, x)
		p.first = p.first[:min(cap(p.first), pageLen)]
		return i
	}
	if pg := int(i>>pageShift - 1); pg == len(p.rest) {
		p.rest = append(p.rest, new([pageLen]T))
	}
	p.rest[i>>pageShift-1][i&(pageLen-1)] = x
	return i
}

// pop removes the last element and returns it, zeroing its place (n must
// be above 0).
func (p *paged[T]) pop() T {
	p.n--
	e := p.at(p.n)
	x := *e
	var zero T
	*e = zero
	return x
}
