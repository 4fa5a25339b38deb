package replay

import (
	"sync"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Events is an in-memory Source: the events of each rank in order.
type Events [][]trace.Event

type memSource struct {
	ev  Events
	pos []int
	// runs hold, per rank, the run of events nextRefs hands out last
	// (made by readRefs).
	runs [][memRun]event
}

// memRun is the most events an in-memory source converts for one nextRefs.
const memRun = 16

var (
	_ refSource = (*memSource)(nil)
	_ refSource = (*compactedSource)(nil)
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

func (m *memSource) readRefs(bool) { m.runs = make([][memRun]event, len(m.ev)) }

// nextRefs converts the rank's next events, up to memRun of them and up to
// the first with Reqs: the run's store is that event's Reqs.
func (m *memSource) nextRefs(r int) ([]event, []uint64) {
	p, evs, run := m.pos[r], m.ev[r], &m.runs[r]
	n := 0
	var reqs []uint64
	for n < memRun && p < len(evs) {
		ev := &evs[p]
		compact(&run[n], ev)
		p, n = p+1, n+1
		if len(ev.Reqs) > 0 {
			reqs = ev.Reqs
			break
		}
	}
	m.pos[r] = p
	return run[:n], reqs
}

// Compacted is events replayed many times (check's battery on one run of
// the harness): each replay of Events.Source converts every event into the
// replay's form (event) as it reads it; a Compacted's sources convert them
// once, at the first replay, and share the result. Its sources read as
// Events.Source's, full events included, and may be used concurrently.
type Compacted struct {
	ev   Events
	once sync.Once
	evs  [][]event  // ev in the replay's form, rank by rank
	reqs [][]uint64 // their Reqs (event.reqsIn), rank by rank
}

// Compact returns the events as a Compacted. It keeps ev, which must not
// change while its sources are in use.
func (e Events) Compact() *Compacted { return &Compacted{ev: e} }

// Source returns a Source over the events.
func (c *Compacted) Source() Source {
	return &compactedSource{memSource: memSource{ev: c.ev, pos: make([]int, len(c.ev))}, c: c}
}

func (c *Compacted) convert() {
	c.evs, c.reqs = make([][]event, len(c.ev)), make([][]uint64, len(c.ev))
	for r, evs := range c.ev {
		out := make([]event, len(evs))
		var store []uint64
		for i := range evs {
			compact(&out[i], &evs[i])
			if len(evs[i].Reqs) > 0 {
				out[i].reqOff = uint32(len(store))
				store = append(store, evs[i].Reqs...)
			}
		}
		c.evs[r], c.reqs[r] = out, store
	}
}

// compactedSource reads full events as memSource does (Next) and hands a
// replay the rest of a rank's converted events at once (nextRefs).
type compactedSource struct {
	memSource
	c *Compacted
}

func (s *compactedSource) readRefs(bool) { s.c.once.Do(s.c.convert) }

func (s *compactedSource) nextRefs(r int) ([]event, []uint64) {
	p := s.pos[r]
	s.pos[r] = len(s.c.evs[r])
	return s.c.evs[r][p:], s.c.reqs[r]
}

// RingSource generates, without storing it, the post events of a ring
// exchange: each of iters rounds every rank Isends bytes to its right
// neighbour, Irecvs from its left, and Waitalls both; then it finalizes. It
// is the synthetic trace of the replay benchmarks.
func RingSource(ranks, iters int, bytes int64) Source {
	s := &ringSource{iters: uint64(iters), rounds: make([]ringRound, ranks)}
	for r := range s.rounds {
		right, left := (r+1)%ranks, (r+ranks-1)%ranks
		ev := &s.rounds[r].ev
		ev[0] = event{op: trace.OpIsend, peer: int32(right), dtype: trace.Uint8, count: bytes, bytes: bytes}
		ev[1] = event{op: trace.OpIrecv, peer: int32(left), dtype: trace.Uint8, count: bytes, bytes: bytes}
		ev[2] = event{op: trace.OpWaitall, dtype: trace.Uint8, nReqs: 2}
	}
	return s
}

type ringSource struct {
	iters  uint64
	rounds []ringRound
}

// ringRound is a rank's events of its round, which nextRefs hands out in
// one run: only the fields that differ between rounds are written.
type ringRound struct {
	ev    [3]event
	reqs  [2]uint64 // ev[2]'s Reqs
	round uint64    // the next round to write
	k, n  int       // ev[k:n] are still to read
}

func (s *ringSource) Ranks() int { return len(s.rounds) }
func (s *ringSource) Err() error { return nil }

func (s *ringSource) Next(r int, ev *trace.Event) bool {
	w := &s.rounds[r]
	if w.k == w.n && !s.fill(w) {
		return false
	}
	e := &w.ev[w.k]
	w.k++
	reqs := ev.Reqs[:0]
	*ev = trace.Event{
		Kind: trace.KindPost, Rank: int32(r), Seq: e.seq, Op: e.op, Peer: e.peer,
		Dtype: e.dtype, Count: e.count, Bytes: e.bytes, Req: e.req,
	}
	ev.Reqs = append(reqs, e.reqsIn(w.reqs[:])...) // the caller's buffer, reused like a trace reader's
	return true
}

func (s *ringSource) readRefs(bool) {}

func (s *ringSource) nextRefs(r int) ([]event, []uint64) {
	w := &s.rounds[r]
	if w.k == w.n && !s.fill(w) {
		return nil, nil
	}
	k := w.k
	w.k = w.n
	return w.ev[k:w.n], w.reqs[:]
}

// fill writes the rank's next round, or its Finalize (over the round's
// first event), and returns false past its end.
func (s *ringSource) fill(w *ringRound) bool {
	round := w.round
	if round >= s.iters {
		if round > s.iters {
			return false
		}
		w.round++
		w.ev[0] = event{op: trace.OpFinalize, seq: 3 * round, dtype: trace.Uint8}
		w.k, w.n = 0, 1
		return true
	}
	w.round++
	seq := 3 * round
	w.ev[0].seq, w.ev[0].req = seq, 2*round+1
	w.ev[1].seq, w.ev[1].req = seq+1, 2*round+2
	w.ev[2].seq = seq + 2
	w.reqs = [2]uint64{2*round + 1, 2*round + 2}
	w.k, w.n = 0, 3
	return true
}
