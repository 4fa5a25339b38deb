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

func (m *memSource) nextRef(r int) *trace.Event {
	p := m.pos[r]
	if p >= len(m.ev[r]) {
		return nil
	}
	m.pos[r] = p + 1
	return &m.ev[r][p]
}

// RingSource generates, without storing it, the post events of a ring
// exchange: each of iters rounds every rank Isends bytes to its right
// neighbour, Irecvs from its left, and Waitalls both; then it finalizes. It
// is the synthetic trace of the replay benchmarks.
func RingSource(ranks, iters int, bytes int64) Source {
	return &ringSource{ranks: ranks, iters: iters, bytes: bytes, pos: make([]ringPos, ranks)}
}

type ringSource struct {
	ranks, iters int
	bytes        int64
	pos          []ringPos
	// ev is the event nextRef hands out: only the fields that differ from
	// one ring event to the next are written.
	ev      trace.Event
	evReady bool
}

// ringPos is where a rank is in the ring: event p, the step of the round
// it is in, and the round (kept so that no event divides).
type ringPos struct {
	p, step int
	round   uint64
}

func (s *ringSource) Ranks() int { return s.ranks }
func (s *ringSource) Err() error { return nil }

func (s *ringSource) Next(r int, ev *trace.Event) bool {
	reqs := ev.Reqs[:0]
	e := s.nextRef(r)
	if e == nil {
		return false
	}
	*ev = *e
	ev.Reqs = append(reqs, e.Reqs...) // the caller's buffer, reused like a trace reader's
	return true
}

func (s *ringSource) nextRef(r int) *trace.Event {
	at := &s.pos[r]
	p, step, round := at.p, at.step, at.round
	if p > 3*s.iters {
		return nil
	}
	at.p = p + 1
	if at.step = step + 1; step == 2 {
		at.step, at.round = 0, round+1
	}
	ev := &s.ev
	if !s.evReady {
		s.evReady = true
		ev.Kind, ev.Dtype = trace.KindPost, trace.Uint8
	}
	ev.Rank, ev.Seq, ev.Count, ev.Bytes = int32(r), uint64(p), s.bytes, s.bytes
	ev.Reqs = ev.Reqs[:0]
	if p == 3*s.iters {
		ev.Op, ev.Peer, ev.Req = trace.OpFinalize, 0, 0
		return ev
	}
	switch step {
	case 0:
		right := r + 1 // the neighbour, without a division
		if right == s.ranks {
			right = 0
		}
		ev.Op, ev.Peer, ev.Req = trace.OpIsend, int32(right), 2*round+1
	case 1:
		left := r - 1
		if left < 0 {
			left = s.ranks - 1
		}
		ev.Op, ev.Peer, ev.Req = trace.OpIrecv, int32(left), 2*round+2
	case 2:
		ev.Op, ev.Peer, ev.Req, ev.Count, ev.Bytes = trace.OpWaitall, 0, 0, 0, 0
		ev.Reqs = append(ev.Reqs, 2*round+1, 2*round+2)
	}
	return ev
}
