package replay

import (
	"errors"
	"runtime"
	"sync"
	"weak"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Decoding a trace file costs about as much as replaying its events (a
// recorded ring: some 550 instructions an event to decode, 480 to
// replay). A file Source therefore decodes in goroutines of their own,
// ahead of the engine: decoders, each with the ranks r%decoders == i and a
// read transaction of its own (trace.Reader.Fork), fill batches of
// decoded events; the replay takes a rank's batches in order, and hands
// each one back to its decoder once it has read it, which refills it with
// the rank's next events. Each rank has batchesPerRank batches, so a
// decoder works ahead by at most that many batches of each rank and
// never waits for the replay but for work; batches are reused, events
// and their Reqs too: no allocation per event once warm. What a replay
// reads does not depend on the decoders' timing: the same events, in
// each rank's order, whatever the schedule.
const (
	batchesPerRank = 2
	// bufferedEvents bounds the decoded events of one Source (about 250
	// bytes each): batches are shorter when there are many ranks.
	bufferedEvents = 1 << 16
	minBatch       = 16
	maxBatch       = 512
	maxDecoders    = 4
)

// batch is a run of decoded events of one rank.
type batch struct {
	rank int
	evs  []trace.Event // evs[:n] are decoded
	n    int
	end  bool  // the rank has no events after these
	err  error // why the rank ended early (a damaged block), with end
}

// prefetch is the decoders of one Source: what they share with it. The
// Source's Close (or its collection by the GC: a replay abandoned midway
// drops its Source without closing it) stops them.
type prefetch struct {
	full []chan *batch // per rank, decoded batches in order
	need []chan *batch // per decoder, batches to refill, in the order the replay read them
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// decodingSource is the Source of a trace file (Trace.Open).
type decodingSource struct {
	t     *Trace
	p     *prefetch
	ranks []decodingRank
	err   error
}

type decodingRank struct {
	cur *batch
	pos int
}

func batchLen(ranks int) int {
	n := bufferedEvents / (batchesPerRank * max(ranks, 1))
	return min(max(n, minBatch), maxBatch)
}

// openDecoding starts the decoders of a new Source over t.
func openDecoding(t *Trace) (*decodingSource, error) {
	ranks := t.r.Ranks()
	nd := min(max(runtime.GOMAXPROCS(0)-1, 1), maxDecoders, max(ranks, 1))
	forks := make([]*trace.Reader, 0, nd)
	for range nd {
		f, err := t.r.Fork()
		if err != nil {
			for _, f := range forks {
				f.Close()
			}
			return nil, err
		}
		forks = append(forks, f)
	}
	p := &prefetch{
		full: make([]chan *batch, ranks),
		need: make([]chan *batch, nd),
		stop: make(chan struct{}),
	}
	n := batchLen(ranks)
	for i := range nd {
		// Room for every batch of the decoder's ranks: handing one back
		// never blocks.
		p.need[i] = make(chan *batch, batchesPerRank*(ranks/nd+1))
	}
	for r := range ranks {
		p.full[r] = make(chan *batch, batchesPerRank)
	}
	// A finished trace counts each rank's events: a short rank gets short
	// batches (one event more, to see the end in the first).
	counts := t.r.Header().RankEvents
	// Every rank's first batch before any second one: the replay starts
	// every rank before it reads far into one.
	for range batchesPerRank {
		for r := range ranks {
			m := n
			if r < len(counts) && counts[r] >= 0 && counts[r] < int64(m) {
				m = int(counts[r]) + 1
			}
			p.need[r%nd] <- &batch{rank: r, evs: make([]trace.Event, m)}
		}
	}
	for i, f := range forks {
		p.wg.Add(1)
		go p.decode(f, i, nd)
	}
	s := &decodingSource{t: t, p: p, ranks: make([]decodingRank, ranks)}
	t.track(p)
	runtime.AddCleanup(s, (*prefetch).close, p)
	return s, nil
}

// decode is decoder i of nd: it fills the batches of its ranks until each
// has ended or the Source is closed.
func (p *prefetch) decode(f *trace.Reader, i, nd int) {
	defer p.wg.Done()
	defer f.Close()
	cursors := make([]*trace.Cursor, len(p.full))
	ended := make([]bool, len(p.full))
	open := (len(p.full) - i + nd - 1) / nd // ranks left to end
	for open > 0 {
		var b *batch
		select {
		case b = <-p.need[i]:
		case <-p.stop:
			return
		}
		if ended[b.rank] {
			continue // the rank's other batch: the replay will not ask again
		}
		c := cursors[b.rank]
		if c == nil {
			c = f.Rank(b.rank)
			cursors[b.rank] = c
		}
		b.n = 0
		for b.n < len(b.evs) && c.Next(&b.evs[b.n]) {
			b.n++
		}
		if b.n < len(b.evs) {
			b.end, b.err = true, c.Err()
			cursors[b.rank], ended[b.rank] = nil, true
			open--
		}
		p.full[b.rank] <- b
	}
}

var errSourceClosed = errors.New("replay: the trace was closed during the replay")

// prefetches is the decoders of a Trace's Sources, for its Close.
type prefetches struct {
	mu   sync.Mutex
	live []weak.Pointer[prefetch] // nil once collected
}

// track adds p.
func (t *Trace) track(p *prefetch) {
	ps := &t.prefetches
	ps.mu.Lock()
	defer ps.mu.Unlock()
	live := ps.live[:0]
	for _, w := range ps.live {
		if w.Value() != nil {
			live = append(live, w)
		}
	}
	ps.live = append(live, weak.Make(p))
}

// closeAll stops the decoders of every Source still open.
func (ps *prefetches) closeAll() {
	ps.mu.Lock()
	live := ps.live
	ps.live = nil
	ps.mu.Unlock()
	for _, w := range live {
		if p := w.Value(); p != nil {
			p.close()
		}
	}
}

// close stops the decoders and waits for them (their transactions end).
func (p *prefetch) close() {
	p.once.Do(func() { close(p.stop) })
	p.wg.Wait()
}

func (s *decodingSource) Ranks() int { return len(s.ranks) }

func (s *decodingSource) Err() error { return s.err }

// Payload returns a payload the trace stored (record --payloads).
func (s *decodingSource) Payload(hash uint64) ([]byte, bool) { return s.t.r.Payload(hash) }

// nextRef hands out rank r's next event in its batch: it stays valid until
// the Source's next call (the batch goes back to its decoder only when the
// rank reads past its end).
func (s *decodingSource) nextRef(r int) *trace.Event {
	rk := &s.ranks[r]
	for {
		if b := rk.cur; b != nil {
			if rk.pos < b.n {
				rk.pos++
				return &b.evs[rk.pos-1]
			}
			if b.end {
				if b.err != nil && s.err == nil {
					s.err = b.err
				}
				return nil
			}
			s.p.need[r%len(s.p.need)] <- b
		}
		select {
		case rk.cur = <-s.p.full[r]:
		case <-s.p.stop:
			rk.cur = &batch{rank: r, end: true, err: errSourceClosed}
		}
		rk.pos = 0
	}
}

func (s *decodingSource) Next(r int, ev *trace.Event) bool {
	e := s.nextRef(r)
	if e == nil {
		return false
	}
	reqs := ev.Reqs[:0]
	*ev = *e
	ev.Reqs = append(reqs, e.Reqs...) // the caller's buffer, as a trace.Cursor does
	return true
}
