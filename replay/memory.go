package replay

import "github.com/p2ptrace/p2ptrace/recorder/trace"

// Events is an in-memory Source: the events of each rank in order.
type Events [][]trace.Event

type memSource struct {
	ev  Events
	pos []int
}

// Source returns a Source over the events.
func (e Events) Source() Source { return &memSource{ev: e, pos: make([]int, len(e))} }

func (m *memSource) Ranks() int { return len(m.ev) }

func (m *memSource) Next(r int, ev *trace.Event) bool {
	p := m.pos[r]
	if p >= len(m.ev[r]) {
		return false
	}
	*ev = m.ev[r][p]
	m.pos[r] = p + 1
	return true
}

func (m *memSource) Err() error { return nil }

// RingSource generates, without storing it, the post events of a ring
// exchange: each of iters rounds every rank Isends bytes to its right
// neighbour, Irecvs from its left, and Waitalls both; then it finalizes. It
// is the synthetic trace of the replay benchmarks.
func RingSource(ranks, iters int, bytes int64) Source {
	return &ringSource{ranks: ranks, iters: iters, bytes: bytes, pos: make([]int, ranks)}
}

type ringSource struct {
	ranks, iters int
	bytes        int64
	pos          []int
}

func (s *ringSource) Ranks() int { return s.ranks }
func (s *ringSource) Err() error { return nil }

func (s *ringSource) Next(r int, ev *trace.Event) bool {
	p := s.pos[r]
	if p > 3*s.iters {
		return false
	}
	s.pos[r] = p + 1
	reqs := ev.Reqs[:0]
	*ev = trace.Event{} // then set: cheaper than copying a literal built aside
	ev.Kind, ev.Rank, ev.Seq, ev.Dtype, ev.Count, ev.Bytes = trace.KindPost, int32(r), uint64(p), trace.Uint8, s.bytes, s.bytes
	ev.Reqs = reqs // the caller's buffer, reused like a trace reader's
	if p == 3*s.iters {
		ev.Op = trace.OpFinalize
		return true
	}
	round := uint64(p / 3)
	right, left := r+1, r-1 // neighbours, without a division
	if right == s.ranks {
		right = 0
	}
	if left < 0 {
		left = s.ranks - 1
	}
	switch p % 3 {
	case 0:
		ev.Op, ev.Peer, ev.Req = trace.OpIsend, int32(right), 2*round+1
	case 1:
		ev.Op, ev.Peer, ev.Req = trace.OpIrecv, int32(left), 2*round+2
	case 2:
		ev.Op, ev.Count, ev.Bytes = trace.OpWaitall, 0, 0
		ev.Reqs = append(reqs, 2*round+1, 2*round+2)
	}
	return true
}
