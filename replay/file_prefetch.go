package replay

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"weak"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Decoding a trace file costs about as much as replaying its events (a
// recorded ring: some 525 instructions an event to decode and convert, 475 to
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
//
// The decoders start on the Source's first read, which sets what they
// decode into: trace.Events for Next, or, for a replay (nextRefs), the
// replay's own form (event, a quarter of the bytes: the replay reads
// every event once, from memory the decoder wrote on another core).
const (
	batchesPerRank = 2
	// bufferedEvents bounds the decoded events of one Source (64 k, 15 MiB
	// of trace.Events or 4 MiB of events): batches are shorter when there
	// are many ranks. Not more: at 1024 ranks a replay takes 30% more time
	// with 4 times as many (the batches' first writes, the collector, and
	// events the decoders wrote long before the replay reads them).
	bufferedEvents = 1 << 16
	minBatch       = 16
	maxBatchBytes  = 512 * fullEventSize
	maxDecoders    = 4
	// Bytes per event, for maxBatchBytes.
	fullEventSize  = 240 // unsafe.Sizeof(trace.Event{})
	shortEventSize = 64  // unsafe.Sizeof(event{})
)

// batch is a run of decoded events of one rank.
type batch struct {
	rank int
	evs  []trace.Event // evs[:n] are decoded (for Next)
	// Or, for nextRefs: short[:n], with their Reqs in reqs.
	short []event
	reqs  []uint64
	n     int
	end   bool  // the rank has no events after these
	err   error // why the rank ended early (a damaged block), with end
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
	// counts are the events of each rank, when the trace knows them.
	counts []int64
	// sendDones: the replay reads the Done events of sends (see doneFilter).
	sendDones bool
	// mu orders start and close: forks are the decoders' readers until
	// they start (closed unused if the Source is closed before its first
	// read).
	mu      sync.Mutex
	forks   []*trace.Reader
	started bool
	closed  bool
}

// decodingSource is the Source of a trace file (Trace.Open).
type decodingSource struct {
	t     *Trace
	p     *prefetch
	ranks []decodingRank
	err   error
	// mode is what the decoders decode into, set by the first read.
	mode decodeMode
	cur  [1]event // what nextRefs hands out of a batch of trace.Events
}

type decodeMode uint8

const (
	notStarted  decodeMode = iota
	fullEvents             // trace.Events, for Next
	shortEvents            // events, for nextRefs
)

// errMixedReads is a programming error: a Source read both ways.
var errMixedReads = errors.New("replay: a trace's Source read with Next after a replay read it")

type decodingRank struct {
	cur *batch
	pos int
}

func batchLen(ranks, eventSize int) int {
	n := bufferedEvents / (batchesPerRank * max(ranks, 1))
	return min(max(n, minBatch), maxBatchBytes/eventSize)
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
		full:   make([]chan *batch, ranks),
		need:   make([]chan *batch, nd),
		stop:   make(chan struct{}),
		counts: t.r.Header().RankEvents,
		forks:  forks,
	}
	for i := range nd {
		// Room for every batch of the decoder's ranks: handing one back
		// never blocks.
		p.need[i] = make(chan *batch, batchesPerRank*(ranks/nd+1))
	}
	for r := range ranks {
		p.full[r] = make(chan *batch, batchesPerRank)
	}
	s := &decodingSource{t: t, p: p, ranks: make([]decodingRank, ranks)}
	t.track(p)
	runtime.AddCleanup(s, (*prefetch).close, p)
	return s, nil
}

// start makes the batches, of trace.Events or, if short, of events, and
// starts the decoders (unless the Source was closed: its reads then end
// with errSourceClosed).
func (p *prefetch) start(short, sendDones bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed {
		return
	}
	p.started, p.sendDones = true, sendDones
	ranks, nd := len(p.full), len(p.need)
	n := batchLen(ranks, fullEventSize)
	if short {
		n = batchLen(ranks, shortEventSize)
	}
	// Every rank's first batch before any second one: the replay starts
	// every rank before it reads far into one.
	for range batchesPerRank {
		for r := range ranks {
			// A finished trace counts each rank's events: a short rank gets
			// short batches (one event more, to see the end in the first).
			m := n
			if r < len(p.counts) && p.counts[r] >= 0 && p.counts[r] < int64(m) {
				m = int(p.counts[r]) + 1
			}
			b := &batch{rank: r}
			if short {
				b.short = make([]event, m)
			} else {
				b.evs = make([]trace.Event, m)
			}
			p.need[r%nd] <- b
		}
	}
	for i, f := range p.forks {
		p.wg.Add(1)
		go p.decode(f, i, nd, short)
	}
	p.forks = nil
}

// decode is decoder i of nd: it fills the batches of its ranks until each
// has ended or the Source is closed.
func (p *prefetch) decode(f *trace.Reader, i, nd int, short bool) {
	defer p.wg.Done()
	defer f.Close()
	var filters []doneFilter
	if short {
		filters = make([]doneFilter, len(p.full))
		for r := range filters {
			filters[r].sendDones = p.sendDones
		}
	}
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
		more := true
		if short {
			more = fillShort(b, c, &filters[b.rank])
		} else {
			for b.n < len(b.evs) && more {
				if more = c.Next(&b.evs[b.n]); more {
					b.n++
				}
			}
		}
		if !more {
			b.end, b.err = true, c.Err()
			cursors[b.rank], ended[b.rank] = nil, true
			open--
		}
		p.full[b.rank] <- b
	}
}

// fillShort fills b with the rank's next events in the replay's form,
// read in place from the cursor (trace.Cursor.NextRef), leaving out the Done events f says no replay
// reads: each event counts those left out before it (at most 255: the
// next is kept). Done events left out at the rank's end count in one that
// stands for the last of them (its seq and op: what a replay would read of
// it). It returns false at the rank's end.
func fillShort(b *batch, c *trace.Cursor, f *doneFilter) bool {
	b.reqs = b.reqs[:0]
	var skipped uint8
	var lastSeq uint64 // of the last Done left out
	var lastOp trace.Op
	short, n := b.short, b.n
	defer func() { b.n = n }()
	for n < len(short) {
		// While no Done event is kept, none is decoded in full (but the
		// one kept as the 256th in a row): the cursor skips them.
		var ev *trace.Event
		if f.dropsDone() && skipped < math.MaxUint8 {
			var k int
			var seq uint64
			var op trace.Op
			if ev, k, seq, op = c.NextPost(math.MaxUint8 - int(skipped)); k > 0 {
				skipped += uint8(k)
				lastSeq, lastOp = seq, op
			}
		} else {
			ev = c.NextRef()
		}
		if ev == nil {
			if skipped > 0 {
				short[n] = event{seq: lastSeq, op: lastOp, flags: eventDone, skipped: skipped - 1}
				n++
			}
			return false
		}
		if !f.keep(ev) && skipped < math.MaxUint8 {
			skipped++
			lastSeq, lastOp = ev.Seq, ev.Op
			continue
		}
		e := &short[n]
		compact(e, ev)
		e.skipped, skipped = skipped, 0
		if e.nReqs > 0 {
			e.reqOff = uint32(len(b.reqs))
			b.reqs = append(b.reqs, ev.Reqs...)
		}
		n++
	}
	return true
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
	p.once.Do(func() {
		p.mu.Lock()
		p.closed = true
		close(p.stop)
		forks := p.forks // never started
		p.forks = nil
		p.mu.Unlock()
		for _, f := range forks {
			f.Close()
		}
	})
	p.wg.Wait()
}

func (s *decodingSource) Ranks() int { return len(s.ranks) }

func (s *decodingSource) Err() error { return s.err }

// Payload returns a payload the trace stored (record --payloads).
func (s *decodingSource) Payload(hash uint64) ([]byte, bool) { return s.t.r.Payload(hash) }

// next returns rank r's next batch and the position in it of its next
// event, or nil at the end of the rank's events.
func (s *decodingSource) next(r int) (*batch, int) {
	rk := &s.ranks[r]
	for {
		if b := rk.cur; b != nil {
			if rk.pos < b.n {
				rk.pos++
				return b, rk.pos - 1
			}
			if b.end {
				if b.err != nil && s.err == nil {
					s.err = b.err
				}
				return nil, 0
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

// readRefs readies the Source for nextRefs, before its first read: the
// decoders then decode into events. (Read with Next first, it hands out
// its trace.Events converted one by one.)
func (s *decodingSource) readRefs(sendDones bool) {
	if s.mode == notStarted {
		s.mode = shortEvents
		s.p.start(true, sendDones)
	}
}

// nextRefs hands out the rest of rank r's batch: the events stay valid
// until the Source's next call for the rank, which hands the batch back to
// its decoder.
func (s *decodingSource) nextRefs(r int) ([]event, []uint64) {
	if s.mode != shortEvents {
		if s.mode != notStarted {
			return s.nextRefFull(r)
		}
		s.readRefs(true)
	}
	b, i := s.next(r)
	if b == nil {
		return nil, nil
	}
	s.ranks[r].pos = b.n
	return b.short[i:b.n], b.reqs
}

// nextRefFull is nextRefs from batches of trace.Events (a Source read with
// Next first): one event at a time.
func (s *decodingSource) nextRefFull(r int) ([]event, []uint64) {
	b, i := s.next(r)
	if b == nil {
		return nil, nil
	}
	ev := &b.evs[i]
	compact(&s.cur[0], ev)
	return s.cur[:], ev.Reqs
}

func (s *decodingSource) Next(r int, ev *trace.Event) bool {
	switch s.mode {
	case notStarted:
		s.mode = fullEvents
		s.p.start(false, false)
	case shortEvents:
		if s.err == nil {
			s.err = errMixedReads
		}
		return false
	}
	b, i := s.next(r)
	if b == nil {
		return false
	}
	e := &b.evs[i]
	reqs := ev.Reqs[:0]
	*ev = *e
	ev.Reqs = append(reqs, e.Reqs...) // the caller's buffer, as a trace.Cursor does
	return true
}
