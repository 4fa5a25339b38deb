package replay

import "github.com/p2ptrace/p2ptrace/recorder/trace"

// Events is an in-memory Source: the events of each rank in order.
type Events [][]trace.Event

type memSource struct {
	ev  Events
	pos []int
	cur [1]event // the event nextRefs hands out
}

var (
	_ refSource = (*memSource)(nil)
	_ refSource = (*ringSource)(nil)
	_ refSource = (*decodingSource)(nil)
)

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

func (m *memSource) readRefs(bool) {}

func (m *memSource) nextRefs(r int) ([]event, []uint64) {
	p := m.pos[r]
	if p >= len(m.ev[r]) {
		return nil, nil
	}
	m.pos[r] = p + 1
	ev := &m.ev[r][p]
	compact(&m.cur[0], ev)
	return m.cur[:], ev.Reqs
}

// RingSource generates, without storing it, the post events of a ring
// exchange: each of iters rounds every rank Isends bytes to its right
// neighbour, Irecvs from its left, and Waitalls both; then it finalizes. It
// is the synthetic trace of the replay benchmarks.
func RingSource(ranks, iters int, bytes int64) Source {
	s := &ringSource{ranks: ranks, iters: iters, pos: make([]ringPos, ranks)}
	post := event{dtype: trace.Uint8, count: bytes, bytes: bytes}
	s.ev[0], s.ev[1], s.ev[2], s.ev[3] = post, post, post, post
	s.ev[0].op, s.ev[1].op, s.ev[2].op, s.ev[3].op = trace.OpIsend, trace.OpIrecv, trace.OpWaitall, trace.OpFinalize
	s.ev[2].count, s.ev[2].bytes, s.ev[3].count, s.ev[3].bytes = 0, 0, 0, 0
	s.ev[2].nReqs = 2
	return s
}

type ringSource struct {
	ranks, iters int
	pos          []ringPos
	// ev are the events nextRefs hands out, one per step of a round and the
	// Finalize: only the fields that differ between ranks and rounds are
	// written.
	ev   [4]event
	reqs [2]uint64 // ev[2]'s Reqs
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
	k, store := s.next(r)
	if k < 0 {
		return false
	}
	e := &s.ev[k]
	reqs := ev.Reqs[:0]
	*ev = trace.Event{
		Kind: trace.KindPost, Rank: int32(r), Seq: e.seq, Op: e.op, Peer: e.peer,
		Dtype: e.dtype, Count: e.count, Bytes: e.bytes, Req: e.req,
	}
	ev.Reqs = append(reqs, e.reqsIn(store)...) // the caller's buffer, reused like a trace reader's
	return true
}

func (s *ringSource) readRefs(bool) {}

func (s *ringSource) nextRefs(r int) ([]event, []uint64) {
	k, store := s.next(r)
	if k < 0 {
		return nil, nil
	}
	return s.ev[k : k+1], store
}

// next writes rank r's next event into s.ev and returns its index there
// (-1 past the rank's end) and the store of its Reqs.
func (s *ringSource) next(r int) (int, []uint64) {
	at := &s.pos[r]
	p, step, round := at.p, at.step, at.round
	if p >= 3*s.iters {
		if p > 3*s.iters {
			return -1, nil
		}
		at.p = p + 1
		s.ev[3].seq = uint64(p)
		return 3, nil
	}
	at.p = p + 1
	if at.step = step + 1; step == 2 {
		at.step, at.round = 0, round+1
	}
	k := step & 3
	ev := &s.ev[k]
	ev.seq = uint64(p)
	switch step {
	case 0:
		right := r + 1 // the neighbour, without a division
		if right == s.ranks {
			right = 0
		}
		ev.peer, ev.req = int32(right), 2*round+1
	case 1:
		left := r - 1
		if left < 0 {
			left = s.ranks - 1
		}
		ev.peer, ev.req = int32(left), 2*round+2
	default:
		s.reqs = [2]uint64{2*round + 1, 2*round + 2}
	}
	return k, s.reqs[:]
}
