package replay

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Source yields the recorded events of each rank in order. A trace file's
// reader is one (see Open); tests and benchmarks build others in memory.
type Source interface {
	Ranks() int
	// Next decodes rank r's next event into ev. It returns false at the end
	// of that rank's events or on error (reported by Err).
	Next(r int, ev *trace.Event) bool
	Err() error
}

// refSource is a Source that can hand out its next event in place, in the
// replay's form (see event), without copying it: the event and its Reqs
// stay valid, and unmodified, until the source's next call. The driver uses
// it when a source has it (the in-memory ones and a trace file's do).
type refSource interface {
	// readRefs readies the source for nextRefs: the driver calls it before
	// its first read. A source may leave out Done events no replay reads
	// (see doneFilter); with sendDones, it keeps those of sends (mutate).
	readRefs(sendDones bool)
	// nextRefs returns rank r's next events, one or more, and the store of
	// their Reqs (see event.reqsIn), or none at the end of its events or
	// on error (reported by Err). They stay valid until the source's next
	// call for rank r; a run of one event, until its next call.
	nextRefs(r int) ([]event, []uint64)
}

// Config configures one replay.
type Config struct {
	Seed       uint64
	Faults     faults.Injector
	EagerLimit int64
	Latency    int64   // ns
	Bandwidth  float64 // bytes/s
	// PollLimit parks a rank after that many fruitless polls (see
	// sim.DefaultPollLimit): 0 means the default, negative never.
	PollLimit int
	// Force, if set, restricts one AnySource receive to one sender when it
	// is matched (see ForcedMatch); Check enumerates alternatives this way.
	Force *ForcedMatch
	// Hold, if set, holds a rank back just before one of its calls (see
	// HeldPost); Check does it to judge each ready send.
	Hold *HeldPost
	// BsendOverhead is the trace's (trace.Header.BsendOverhead): set, every
	// rank's buffered sends are checked against its attached space.
	BsendOverhead int64
	// Comms are the trace's communicators with their members
	// (trace.Header.Comms), for the wait-for graph of a stuck run.
	Comms []trace.CommGroup
	// Unstarted are the trace's persistent requests never started
	// (trace.Header.Unstarted), candidates of a stuck run's receives.
	Unstarted []trace.Unstarted
	// AsyncMatches: a nonblocking collective call matches the blocking
	// call of the same collective (a torch.distributed trace's; see
	// sim.Config.AsyncMatches).
	AsyncMatches bool
	// Names is the trace's vocabulary for its calls in the findings
	// (trace.NamesOf; see sim.Config.Names).
	Names *trace.Names

	// noForecasts turns off the driver's forecasts (a test compares runs
	// with and without them: they must change nothing).
	noForecasts bool
}

// Outcome is what one replay did.
type Outcome struct {
	Problems []sim.Problem
	Stuck    bool
	Events   int64 // events read
	// Races lists AnySource receives that matched a different send than in the recording.
	Races []Race
	// Corrupted lists receives that got data other than what was sent
	// (under mutate: a send buffer rewritten while in flight).
	Corrupted []Corruption
	// Forced is the receive (or probe) Config.Force named, once posted (nil
	// if the run never reached it).
	Forced *sim.Op
	// Cut lists the ranks whose record ended before their Finalize (a trace
	// cut short), in the order the replay reached those ends.
	Cut []int
	// names is Config.Names, for Explain.
	names *trace.Names
}

// Race is an AnySource receive whose match changed under replay, or a
// forced AnySource probe that found another message (see probe.go).
type Race struct {
	Recv         *sim.Op
	RecordedRank int
	RecordedSeq  uint64
	ReplayRank   int
	ReplaySeq    uint64
	// Replayed is the send the receive matched under replay.
	Replayed *sim.Op
	// Recorded is the post event of the send it matched when recorded, when
	// known (Run looks it up in the trace; Replay alone leaves it nil).
	Recorded *trace.Event
}

// Corruption is a receive that got a send buffer rewritten while in flight.
type Corruption struct {
	Send, Recv *sim.Op
	// Filled in from the trace by Run (Replay alone leaves them zero):
	// Retired is the post event of the call that completed the send's request
	// (Wait, a Waitall, ...; nil if none did): the write happened between the
	// send's call and it. Diff holds the values, when the trace has the
	// send's payloads at post and at completion (record --payloads).
	Retired *trace.Event
	Diff    *Diff
}

// rankCursor is the replay state of one rank: no goroutine, just a position.
// A replay of many ranks steps each in turn, so a rank's cursor is out of
// the caches whenever it is stepped: it is 256 bytes, four cache lines, and
// what step reads per event and per call is in the first three
// (TestRankCursorLayout).
type rankCursor struct {
	// win[at:] are the rank's next events, from the source's last run
	// (refSource.nextRefs) or put back (see unread), with their Reqs' store.
	win     []event
	winReqs []uint64
	at      int
	reqs    reqTable
	// held are ops of the last call, released to the engine for reuse once
	// the rank makes its next call (the call has returned by then): the
	// first heldReqs of scratch's array (the requests a wait retired),
	// then held (see hold).
	held     []*sim.Op
	scratch  []*sim.Op
	heldReqs int
	// Room for held and scratch in the cursor itself.
	heldBuf, scratchBuf [2]*sim.Op
	done                bool
	sendrecv            *sim.Op
	// Line 3: what few calls read.
	// anySource are the AnySource recvs by seq, until their recorded Done
	// event is read; nil until the rank posts one, so that a Done event of
	// a trace without them costs no look at a map.
	anySource map[uint64]*sim.Op
	// back holds an event put back that its source may not keep (see
	// unread); made on first use.
	back *backEvent
	_    [48]byte // (to 256 bytes)
}

// backEvent is an event put back, and its Reqs.
type backEvent struct {
	ev   [1]event
	reqs []uint64
}

type driver struct {
	src   Source
	ref   refSource // src, or a runSource over it: the driver reads runs of events
	e     *sim.Engine
	ranks []rankCursor
	// touch: the source decodes ahead on another core (decodingSource),
	// so a rank's next events are loaded after each step (touchAhead);
	// touched sums what it loads, so that the loads are not dropped.
	touch   bool
	touched uint64
	// forecasts: the driver tells the engine of its ranks' next posts
	// (forecast); off only in a test.
	forecasts bool
	out       Outcome
	mutate    bool
	force     *ForcedMatch
	probe     probeForce // when force names a probe
	// held is Config.Hold, while the rank has not reached the call.
	held    HeldPost
	holding bool
	// late tracks, under mutate, the receives of rendezvous sends (see lateRecvs).
	late lateRecvs
	ids  []uint64 // request ids of the call being made, when *ev may change
	// unsettled holds AnySource receives whose recorded Done event was read
	// ahead of their completion in the replay: compared at the end.
	unsettled []recordedMatch
}

// recordedMatch is the send an AnySource receive matched when recorded.
type recordedMatch struct {
	recv *sim.Op
	rank int
	seq  uint64
}

// lateRecvs judges, under mutate, the receives of rendezvous sends: their
// send buffer was read at the latest legal moment, so a receive got
// corrupted data when the recorded hashes of its send differ between post
// and completion (the send's recorded Done event says so). The receive
// completes in the replay before or after the driver reads that Done event;
// whichever comes second decides. Only what a finding needs is kept: the
// sends whose Done is not read yet, the receives waiting for one, and the
// corruptions, so that the memory of a mutate replay is that of its
// messages in flight, not of the trace.
type lateRecvs struct {
	// unread are the sends posted whose recorded Done event is not read yet.
	unread map[opKey]struct{}
	// mutated are the sends whose recorded Done event said mutated.
	mutated map[opKey]bool
	// waiting are receives completed before their send's Done was read.
	waiting map[opKey][]lateRecv
	n       int // receives seen so far: the order of the findings
	found   []lateRecv
}

// lateRecv is a completed receive of a rendezvous send: copies of both ops
// (the engine reuses the originals) and its place in completion order.
type lateRecv struct {
	n          int
	send, recv *sim.Op
}

func (l *lateRecvs) init() {
	l.unread, l.mutated, l.waiting = map[opKey]struct{}{}, map[opKey]bool{}, map[opKey][]lateRecv{}
}

// posted notes a send whose Done event is still to come.
func (l *lateRecvs) posted(k opKey) { l.unread[k] = struct{}{} }

// sendDone notes the recorded Done event of send k, and settles the
// receives that waited for it.
func (l *lateRecvs) sendDone(k opKey, mutated bool) {
	delete(l.unread, k)
	if mutated {
		l.mutated[k] = true
	}
	if ws, ok := l.waiting[k]; ok {
		delete(l.waiting, k)
		if mutated {
			l.found = append(l.found, ws...)
		}
	}
}

// completed notes a receive of a rendezvous send as it completes.
func (l *lateRecvs) completed(rv *sim.Op) {
	s := rv.Matched()
	k := opKey{int(s.Rank), s.Seq}
	l.n++
	_, unread := l.unread[k]
	if !unread && !l.mutated[k] {
		return
	}
	sc, rc := s.Copy(), rv.Copy()
	lr := lateRecv{l.n, &sc, &rc}
	if unread {
		l.waiting[k] = append(l.waiting[k], lr)
		return
	}
	l.found = append(l.found, lr)
}

// corrupted lists the corrupted receives in the order they completed (a
// receive whose send's Done was never read is none).
func (l *lateRecvs) corrupted() []Corruption {
	slices.SortFunc(l.found, func(a, b lateRecv) int { return a.n - b.n })
	var cs []Corruption
	for _, lr := range l.found {
		cs = append(cs, Corruption{Send: lr.send, Recv: lr.recv})
	}
	return cs
}

// transfers observes completions under mutate.
type transfers driver

func (t *transfers) Posted(*sim.Op) {}

func (t *transfers) Completed(op *sim.Op) {
	if op.Kind.IsRecv() && op.Matched() != nil && !op.Matched().Eager() {
		t.late.completed(op)
	}
}

type opKey struct {
	rank int
	seq  uint64
}

// Replay runs the trace in src once on the engine under cfg. It has no
// goroutines: each rank is a cursor stepped by the engine's scheduler.
func Replay(src Source, cfg Config) (*Outcome, error) {
	d := &driver{src: src, ranks: make([]rankCursor, src.Ranks())}
	d.mutate = cfg.Faults != nil && cfg.Faults.Mutate()
	d.ref, _ = src.(refSource)
	_, d.touch = src.(*decodingSource)
	if d.ref == nil {
		d.ref = &runSource{src: src}
	}
	d.ref.readRefs(d.mutate)
	eager := cfg.EagerLimit
	if eager == 0 {
		eager = -1
	}
	d.force = cfg.Force
	if cfg.Hold != nil {
		d.held, d.holding = *cfg.Hold, true
	}
	d.forecasts = !cfg.noForecasts
	var obs sim.Observer
	if d.mutate {
		d.late.init()
		obs = (*transfers)(d)
	}
	d.e = sim.New(sim.Config{Ranks: src.Ranks(), Seed: cfg.Seed, EagerLimit: eager, Latency: time.Duration(cfg.Latency), Bandwidth: cfg.Bandwidth, Faults: cfg.Faults, PollLimit: cfg.PollLimit, Observer: obs, BsendOverhead: cfg.BsendOverhead, Comms: cfg.Comms, Unstarted: cfg.Unstarted, AsyncMatches: cfg.AsyncMatches, Names: cfg.Names})
	for i := range d.ranks {
		c := &d.ranks[i]
		c.held, c.scratch = c.heldBuf[:0], c.scratchBuf[:0]
	}
	for {
		r, ok := d.e.Next()
		if !ok {
			break
		}
		if err := d.step(r); err != nil {
			return nil, err
		}
		if d.touch {
			d.touchAhead(&d.ranks[r])
		}
	}
	if err := src.Err(); err != nil {
		return nil, err
	}
	for _, m := range d.unsettled {
		d.compareMatch(m.recv, m.rank, m.seq)
	}
	d.probeRace()
	d.e.End()
	if d.mutate {
		d.out.Corrupted = d.late.corrupted()
	}
	d.out.Problems = d.e.Problems()
	d.out.Stuck = d.e.Stuck()
	d.out.names = cfg.Names
	return &d.out, nil
}

// step runs rank r's recorded calls until one blocks or yields. The calls
// most events of a trace are (sends, receives, waits) are made here, in
// its loop; exec makes the others.
func (d *driver) step(r int) error {
	c := &d.ranks[r]
	d.release(c) // the call the rank was in has returned
	if c.done {
		return nil
	}
	for {
		var ev *event
		var store []uint64
		if at := c.at; at < len(c.win) { // read, inline
			c.at = at + 1
			ev, store = &c.win[at], c.winReqs
			if a := at + sim.PostLead; a < len(c.win) && d.forecasts && d.e.WantsForecasts() {
				d.forecast(r, &c.win[a])
			}
		} else if ev, store = d.refill(r, c); ev == nil {
			return d.ended(r, c)
		} else if d.forecasts && d.e.WantsForecasts() {
			// The run's first calls were not forecast: they are now.
			for a := 1; a < min(sim.PostLead, len(c.win)); a++ {
				d.forecast(r, &c.win[a])
			}
		}
		if d.holding && r == d.held.Rank && ev.seq == d.held.Seq && !ev.isDone() {
			// The held call: the rank waits first, and makes it when it
			// runs again (see HeldPost).
			d.holding = false
			d.unread(c, ev, store)
			if !d.e.Hold(r, HoldTime) {
				return nil
			}
			continue
		}
		d.out.Events += ev.events()
		if ev.isDone() {
			// Most Done events change nothing: only an AnySource receive's
			// (the match to compare), under mutate a send's, and a forced
			// probe's (its recorded status: probe.go) do.
			if d.mutate || len(c.anySource) > 0 || d.probe.probe != nil {
				d.recordedDone(r, ev)
			}
			continue
		}
		if ev.count|ev.bytes < 0 && impossibleSizes(ev) { // either negative: one test per event, inline
			return badSizes(r, ev)
		}
		e := d.e
		switch ev.op {
		case trace.OpIsend, trace.OpIssend, trace.OpIbsend, trace.OpIrsend:
			op := d.msgOp(r, ev)
			op.Mode = modeOf(ev.op)
			e.NewRequest(op)
			if !c.reqs.tryPut(ev.req, op) {
				c.reqs.put(ev.req, op)
			}
			e.PostSend(op)
			continue
		case trace.OpIrecv:
			op := d.msgOp(r, ev)
			if d.probe.follow {
				d.followProbe(op) // the receive after a forced probe (probe.go)
			}
			d.noteAnySource(c, op)
			e.NewRequest(op)
			if !c.reqs.tryPut(ev.req, op) {
				c.reqs.put(ev.req, op)
			}
			e.PostRecv(op)
			continue
		case trace.OpWait, trace.OpWaitall:
			// The requests are retired once the wait returns: never named
			// again, so each leaves the table as it is looked up.
			// Room for all at once: appended one by one, the scratch of
			// each rank of a 1024-rank all-to-all (a wait of 2,046)
			// grew a dozen times (10 K allocations a replay, 5% of its
			// bytes).
			reqs := ev.reqsIn(store)
			ops := slices.Grow(c.scratch[:0], len(reqs))
			for k, id := range reqs {
				op := c.reqs.take(id)
				if op == nil {
					if j := slices.Index(reqs[:k], id); j >= 0 {
						op = ops[j] // named twice in one call
					}
				}
				if op == nil {
					return fmt.Errorf("%w: rank %d seq %d: %s of unknown request %d", errBadTrace, r, ev.seq, ev.op, id)
				}
				ops = append(ops, op)
			}
			// The engine holds ops only while the rank is blocked in this
			// call, and they are released before the scratch is reused.
			c.scratch, c.heldReqs = ops[:0], len(ops)
			call := d.msgOp(r, ev)
			call.SetReqs(ops)
			d.hold(c, call)
			if !e.Block(call, ops, false) {
				return nil
			}
		case trace.OpSend, trace.OpSsend, trace.OpBsend, trace.OpRsend:
			op := d.msgOp(r, ev)
			op.Mode = modeOf(ev.op)
			e.PostSend(op)
			d.hold(c, op)
			if !e.BlockOn(op) {
				return nil
			}
		case trace.OpRecv:
			op := d.msgOp(r, ev)
			if d.probe.follow {
				d.followProbe(op) // the receive after a forced probe (probe.go)
			}
			d.noteAnySource(c, op)
			e.PostRecv(op)
			if s := c.sendrecv; s != nil {
				c.sendrecv = nil
				d.hold(c, s)
				d.hold(c, op)
				if !e.Block(op, []*sim.Op{s, op}, false) {
					return nil
				}
			} else if d.hold(c, op); !e.BlockOn(op) {
				return nil
			}
		default:
			if cont, err := d.exec(r, c, ev, store); err != nil || !cont {
				return err
			}
		}
		d.release(c) // the call returned
	}
}

// forecast tells the engine of a send or receive that rank r will post a
// few calls from now, for it to load what the post will touch (see
// sim.Engine.WillPost): the posts of a many-rank exchange would each wait
// for three cache misses in turn.
func (d *driver) forecast(r int, ev *event) {
	if ev.flags&eventDone == 0 {
		d.e.WillPost(r, ev.op, int(ev.peer), int(ev.tag), int(ev.comm))
	}
}

// release hands the rank's held ops back to the engine.
func (d *driver) release(c *rankCursor) {
	if c.heldReqs > 0 {
		for _, op := range c.scratch[:c.heldReqs] {
			if op.Peer != trace.AnySource { // (see hold)
				d.e.Release(op)
			}
		}
		c.heldReqs = 0
	}
	if len(c.held) > 0 {
		for _, op := range c.held {
			d.e.Release(op)
		}
		c.held = c.held[:0]
	}
}

// ended is step at the end of rank r's events (or on an error reading them).
func (d *driver) ended(r int, c *rankCursor) error {
	if err := d.src.Err(); err != nil {
		return err
	}
	if d.e.EndPolling(r) {
		return nil // it was polling: it polls on, parked (a livelock's record ends so)
	}
	// The rank's record ends here without its Finalize: the trace was cut
	// short (killed, crashed, stopped as hung). The rank stops where it
	// was; what it had pending is not a finding.
	c.done = true
	d.e.Cut(r)
	d.out.Cut = append(d.out.Cut, r)
	return nil
}

func (d *driver) recordedDone(r int, ev *event) {
	c := &d.ranks[r]
	if d.mutate && ev.op.IsSend() {
		d.late.sendDone(opKey{r, ev.seq}, ev.mutated())
	}
	if d.probe.probe != nil {
		d.probeDone(r, ev)
	}
	if op, ok := c.anySource[ev.seq]; ok {
		delete(c.anySource, ev.seq)
		if ev.matchRank() < 0 {
			return // never matched when recorded: nothing to compare with
		}
		if !op.Done() {
			// Read ahead (past a Test or a Waitany): the replay has not
			// completed the receive yet; compare once the run is over.
			d.unsettled = append(d.unsettled, recordedMatch{op, int(ev.matchRank()), ev.matchSeq()})
			return
		}
		d.compareMatch(op, int(ev.matchRank()), ev.matchSeq())
	}
}

// compareMatch reports a Race if the completed receive op matched another
// send than the recorded one (rank, seq).
func (d *driver) compareMatch(op *sim.Op, rank int, seq uint64) {
	if op.Done() && !op.Cancelled() && (int(op.MatchRank) != rank || op.MatchSeq != seq) {
		d.out.Races = append(d.out.Races, Race{Recv: op, RecordedRank: rank, RecordedSeq: seq, ReplayRank: int(op.MatchRank), ReplaySeq: op.MatchSeq, Replayed: op.Matched()})
	}
}

func (d *driver) msgOp(r int, ev *event) *sim.Op {
	op := d.e.NewOp(r, ev.op)
	// The engine counts calls as the recorder did (a gap means a foreign
	// trace): the recorded seq is the op's.
	op.Seq = ev.seq
	op.Peer, op.Tag, op.Comm = ev.peer, ev.tag, ev.comm
	op.Dtype, op.Count, op.Bytes = ev.dtype, ev.count, ev.bytes
	op.Site = uintptr(ev.site)
	op.SetStream(ev.stream)
	if d.mutate && ev.op.IsSend() {
		d.late.posted(opKey{r, ev.seq})
	}
	return op
}

var errBadTrace = errors.New("trace does not replay")

// reqOps looks up the requests of a wait-family call. The slice is the
// rank's scratch: the engine holds it only while the rank is blocked in that
// call, and the rank makes no other call meanwhile.
func (d *driver) reqOps(r int, c *rankCursor, ev *event, reqs []uint64) ([]*sim.Op, error) {
	ops := c.scratch[:0]
	for _, id := range reqs {
		op, ok := c.reqs.get(id)
		if !ok {
			c.scratch = ops[:0]
			return nil, fmt.Errorf("%w: rank %d seq %d: %s of unknown request %d", errBadTrace, r, ev.seq, ev.op, id)
		}
		ops = append(ops, op)
	}
	c.scratch = ops[:0]
	return ops, nil
}

// impossibleSizes says whether post ev, with a negative count or size, is
// one no call can have (a damaged trace) rather than a call with a
// negative count (the program's invalid call, MPI_ERR_COUNT, which the
// engine reports: sim's negativeCount). A message op's size is its count
// times its type's size, so the two are never of opposite signs; a
// collective's count is its communicator's size, never negative, and its
// size its count times its type's; no other op has a count or size below 0.
func impossibleSizes(ev *event) bool {
	switch {
	case ev.op.IsSend() || ev.op.IsRecv():
		return ev.count > 0 || ev.bytes > 0
	case ev.op.IsCollective():
		return ev.count < 0
	}
	return true
}

// badSizes refuses an op whose count or size no call can have (a damaged
// trace): the engine sizes copies by them.
func badSizes(r int, ev *event) error {
	return fmt.Errorf("%w: rank %d seq %d: %s with count %d and %d bytes", errBadTrace, r, ev.seq, ev.op, ev.count, ev.bytes)
}

// exec makes the call of post event ev, whose Reqs are in store, for the
// ops step does not make itself.
func (d *driver) exec(r int, c *rankCursor, ev *event, store []uint64) (bool, error) {
	e := d.e
	switch ev.op {
	case trace.OpSendrecv:
		op := d.msgOp(r, ev)
		e.PostSend(op)
		c.sendrecv = op
		return true, nil
	case trace.OpWaitany:
		ops, err := d.reqOps(r, c, ev, ev.reqsIn(store))
		if err != nil {
			return false, err
		}
		call := d.msgOp(r, ev)
		call.SetReqs(ops)
		d.hold(c, call)
		// The program's later calls followed the recorded answer: wait for
		// the request it got, and retire that one alone. (Reading ahead may
		// overwrite *ev: keep what is needed of it.)
		d.ids = append(d.ids[:0], ev.reqsIn(store)...)
		if done, ok := d.peekDone(r, c, ev.seq); ok && done.index() >= 0 && int(done.index()) < len(ops) {
			i := int(done.index())
			c.reqs.del(d.ids[i]) // retired: never named again
			d.hold(c, ops[i])
			return e.WaitanyAt(call, ops, i), nil
		}
		return e.Block(call, ops, true), nil
	case trace.OpTest, trace.OpTestall:
		ops, err := d.reqOps(r, c, ev, ev.reqsIn(store))
		if err != nil {
			return false, err
		}
		call := d.msgOp(r, ev)
		call.SetReqs(ops)
		// The program's control flow followed the recorded answer: a Test that
		// said "done" is where the program relied on completion, so it waits.
		if d.peekFlag(r, c, ev.seq) {
			return e.Block(call, ops, false), nil
		}
		e.Post(call)
		return e.Unanswered(call, ops), nil
	case trace.OpFree:
		ops, err := d.reqOps(r, c, ev, ev.reqsIn(store))
		if err != nil || len(ops) != 1 {
			return false, fmt.Errorf("%w: rank %d seq %d: Free needs one request", errBadTrace, r, ev.seq)
		}
		call := d.msgOp(r, ev)
		// A recorded Free whose done has the flag freed a request the
		// recorder saw active (an MPI persistent request, started and not
		// completed): a finding whatever this replay's timing, unless a
		// send's (see sim's Free).
		if done, ok := d.peekDone(r, c, ev.seq); ok {
			call.Flag = done.flag()
		}
		e.Free(call, ops[0])
		return true, nil
	case trace.OpCancel:
		return d.cancel(r, c, ev, store) // cancel.go
	case trace.OpBufferAttach, trace.OpBufferDetach:
		return d.buffer(r, c, ev), nil // bsend.go
	case trace.OpCompute:
		call := d.msgOp(r, ev)
		d.hold(c, call)
		return e.Compute(call, ev.duration()), nil
	case trace.OpBarrier:
		return d.collective(r, c, ev), nil
	case trace.OpProbe:
		op := d.msgOp(r, ev)
		d.forceProbe(op)
		return e.Probe(op), nil
	case trace.OpIprobe:
		op := d.msgOp(r, ev)
		if d.forceProbe(op) {
			return e.Probe(op), nil // polled until it found the forced sender's message
		}
		// The program's control flow already followed the recorded answer;
		// the replay's answer counts for the polls (see sim.DefaultPollLimit).
		e.Iprobe(op)
		return !e.Parked(r), nil
	case trace.OpStreamSend, trace.OpStreamRecv:
		op := d.msgOp(r, ev)
		if ev.req != 0 {
			// A stream op with a request (torch.distributed's Work under
			// NCCLSource): waited for like an Isend.
			e.NewRequest(op)
			c.reqs.put(ev.req, op)
		}
		e.StreamOp(op)
		return true, nil
	case trace.OpSynchronize:
		return e.Synchronize(d.msgOp(r, ev)), nil
	case trace.OpGroupStart:
		e.GroupStart(d.msgOp(r, ev))
		return true, nil
	case trace.OpGroupEnd:
		e.GroupEnd(d.msgOp(r, ev))
		return true, nil
	case trace.OpFinalize:
		e.Finalize(d.msgOp(r, ev))
		c.done = true
		// What follows are Done events only (the Finalize's own, late
		// completions): read them for the record comparisons.
		for {
			rest, _ := d.read(r)
			if rest == nil {
				break
			}
			d.out.Events += rest.events()
			if rest.isDone() {
				d.recordedDone(r, rest)
			}
		}
		return false, nil
	}
	if ev.op.IsNonblockingCollective() {
		return d.icollective(r, c, ev), nil // collective.go
	}
	if ev.op.IsCollective() {
		return d.collective(r, c, ev), nil
	}
	return false, fmt.Errorf("%w: rank %d seq %d: op %s cannot be replayed", errBadTrace, r, ev.seq, ev.op)
}

// peekFlag reads ahead to the Done event of a Test (written right after its
// post, since Test never blocks) and returns the recorded result. A Test
// without its Done (a damaged or foreign trace) answered no: the post after
// it is kept for step, as peekDone does.
func (d *driver) peekFlag(r int, c *rankCursor, seq uint64) bool {
	done, ok := d.peekDone(r, c, seq)
	return ok && done.flag()
}

// read returns rank r's next event from the source and the store of its
// Reqs, or nil at the end of the rank's events or on error.
func (d *driver) read(r int) (*event, []uint64) {
	c := &d.ranks[r]
	if at := c.at; at < len(c.win) {
		c.at = at + 1
		return &c.win[at], c.winReqs
	}
	return d.refill(r, c)
}

// touchAhead loads the first bytes of the next touchedEvents events of rank
// c (an event is one cache line), which a decoder wrote on another core:
// the rank reads them when it is stepped again, after the other ranks, and
// with many ranks each of those reads missed the caches in turn; loaded
// now, the misses overlap the replay's work. Measured on the recorded
// 1024-rank ring from its file: 4.5% less time per event (paired runs,
// faster in 83 of 132); a source in memory gains nothing and skips it.
func (d *driver) touchAhead(c *rankCursor) {
	var x uint64
	win := c.win[c.at:min(c.at+touchedEvents, len(c.win))]
	for i := range win {
		x += win[i].seq
	}
	d.touched += x
}

// touchedEvents is how many events touchAhead loads: the calls of one step
// in a ring (Isend, Irecv, Waitall), and one more.
const touchedEvents = 4

// refill is read past the rank's last run of events.
func (d *driver) refill(r int, c *rankCursor) (*event, []uint64) {
	win, store := d.ref.nextRefs(r)
	if len(win) == 0 {
		c.win, c.at, c.winReqs = nil, 0, nil
		return nil, nil
	}
	c.win, c.at, c.winReqs = win, 1, store
	return &win[0], store
}

// peekDone reads ahead to the Done event of the call seq of rank r: the
// call's Done comes right after its post, or after Done events of other ops
// (completions the call waited for), which it hands to recordedDone. A post
// event before it (a call that never returned when recorded) is kept for
// step to read next; ok is false then, or at the end of the rank's events.
func (d *driver) peekDone(r int, c *rankCursor, seq uint64) (done event, ok bool) {
	for {
		ev, store := d.read(r)
		if ev == nil {
			return event{}, false
		}
		if !ev.isDone() {
			d.unread(c, ev, store)
			return event{}, false
		}
		d.out.Events += ev.events()
		if ev.seq == seq {
			return *ev, true
		}
		d.recordedDone(r, ev)
	}
}

// unread puts back ev, rank c's post event just read (whose Reqs are in
// store), for step to read next. A run of the rank's events holds it until
// the rank's next read of its source: there it is read again; a run of one
// may not be kept so long (see refSource), and a Source's Next reuses its
// event, so it is copied.
func (d *driver) unread(c *rankCursor, ev *event, store []uint64) {
	if at := c.at; at > 0 && &c.win[at-1] == ev && (len(c.win) > 1 || c.back != nil && ev == &c.back.ev[0]) {
		c.at = at - 1
		return
	}
	if c.back == nil {
		c.back = new(backEvent)
	}
	b := c.back
	b.ev[0] = *ev
	b.ev[0].reqOff = 0
	b.reqs = append(b.reqs[:0], ev.reqsIn(store)...)
	c.win, c.at, c.winReqs = b.ev[:], 0, b.reqs
}

// hold queues op for release once the rank's current call has returned.
// AnySource receives stay: a Race may name them when their Done event is read.
func (d *driver) hold(c *rankCursor, op *sim.Op) {
	if op.Peer != trace.AnySource {
		c.held = append(c.held, op)
	}
}

func (d *driver) noteAnySource(c *rankCursor, op *sim.Op) {
	if op.Peer == trace.AnySource {
		if c.anySource == nil {
			c.anySource = map[uint64]*sim.Op{}
		}
		c.anySource[op.Seq] = op
		if f := d.force; f != nil && f.Rank == int(op.Rank) && f.Seq == op.Seq {
			op.Force(int32(f.Src))
			d.out.Forced = op
		}
	}
}

// modeOf is the mode of send op o. The blocking sends (Send, Ssend, Bsend,
// Rsend) and the nonblocking ones (Isend, ...) are each numbered in the
// order of sim's modes (Standard, Synchronous, Buffered, Ready): a
// subtraction, not a switch, per send (TestModeOf pins the pairs).
func modeOf(o trace.Op) sim.Mode {
	switch {
	case o >= trace.OpIsend && o <= trace.OpIrsend:
		return sim.Mode(o - trace.OpIsend)
	case o >= trace.OpSend && o <= trace.OpRsend:
		return sim.Mode(o - trace.OpSend)
	}
	return sim.Standard
}
