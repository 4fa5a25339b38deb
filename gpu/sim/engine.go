package sim

import (
	"errors"
	"math"
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/internal/hugepage"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Defaults of the link model and the eager protocol.
const (
	DefaultEagerLimit = 64 << 10 // bytes; messages up to this size are sent eagerly
	DefaultLatency    = 2 * time.Microsecond
	DefaultBandwidth  = 25e9 // bytes per second (an NVLink-class link)
)

// Config configures an Engine.
type Config struct {
	Ranks      int
	Seed       uint64
	EagerLimit int64         // 0 means DefaultEagerLimit; negative means no eager sends
	Latency    time.Duration // 0 means DefaultLatency
	Bandwidth  float64       // bytes/s; 0 means DefaultBandwidth
	Faults     faults.Injector
	// PollLimit is how many fruitless polls in a row park a rank (see
	// DefaultPollLimit): 0 means DefaultPollLimit, negative means never.
	PollLimit int
	// Observer, if set, sees every op when it is posted and when it completes.
	Observer Observer
	// BsendOverhead, when set, checks every rank's buffered sends against
	// its attached space from the start, each message needing this much
	// beyond its bytes (see bsend.go).
	BsendOverhead int64
	// Comms are communicators whose members are known in advance (an MPI
	// trace's, trace.Header.Comms): a rank stuck in a collective on one
	// waits for its members that have not entered it. Of another
	// communicator only the ranks seen using it are known.
	Comms []trace.CommGroup
	// Unstarted are persistent requests the program made and never
	// started (an MPI trace's, trace.Header.Unstarted): a stuck receive
	// or send that one of them would have matched names it as the
	// candidate (see unstartedFor).
	Unstarted []trace.Unstarted
	// AsyncMatches makes a nonblocking collective call match the blocking
	// call of the same collective (torch.distributed: a call with
	// async_op=True is the same collective as one without). MPI's rule,
	// the default, is that they never match (MPI-3.1 sec. 5.12).
	AsyncMatches bool
	// Names is the vocabulary of the reports' calls (trace.NamesOf: a
	// torch.distributed trace's "all_reduce ReduceOp.SUM"); nil: the
	// ops' own names.
	Names *trace.Names
}

// Observer is told about ops as the engine processes them (the recorder is one).
type Observer interface {
	Posted(op *Op)
	Completed(op *Op)
}

// Rank states.
type rankState uint8

const (
	stateReady   rankState = iota // has a resume event queued or is running
	stateBlocked                  // waiting on a condition
	stateDone                     // finalized
)

type waitKind uint8

const (
	waitNone waitKind = iota
	waitAll
	waitAny
	waitStream
	waitCompute
	waitPoll // parked by its polls (see livelock.go)
)

type rank struct {
	// What every message and wait touches comes first, in as few cache
	// lines as it fits.
	id    int
	clock int64
	state rankState
	wait  waitKind
	// probing: the rank is blocked in a Probe (blockedIn).
	probing bool
	// cut: the rank's record ended before it finished (Cut).
	cut    bool
	waitOn []*Op
	// blockedIn is the op (call) the rank is blocked in, for reports.
	blockedIn *Op
	// posted holds this rank's unmatched receives in post order.
	posted matchQueue
	// unexpected holds sends to this rank whose envelope arrived unmatched, in arrival order.
	unexpected matchQueue
	waitLeft   int // ops of a wait-all not yet done (they are marked awaited)
	nTransit   int // sends in inTransit, so the common case skips the map
	// active holds the nonblocking ops not yet waited, tested complete or
	// freed, in request id order: the last has id nextReq, those before it
	// the ids before, each nil once retired (see retire); those before
	// activeHead are all retired. A request left active holds the slots of
	// those made after it until it is retired (or the rank ends).
	active     []*Op
	activeHead int
	seq        uint64
	nextReq    uint64
	one        [1]*Op // BlockOn's wait list
	// polls counts the polls in a row that found nothing since the rank's
	// last other call (Compute aside); lastPoll is the last of them.
	// pollMark is seq-computes after it: the run goes on while the rank
	// makes no other call (see polled), so that other calls pay nothing.
	polls    int
	lastPoll *Op
	pollMark uint64
	computes uint64

	waitSt *stream
	// inTransit per source: sends whose envelope is still on its way (FIFO
	// keeps non-overtaking). It and streams are made on first use.
	inTransit map[int]*transit
	streams   map[int]*stream
	// wildFrom holds, by sender rank, the last receive from any source of
	// the rank that took a message of that sender: made (one entry a rank of
	// the world) on the first such match; see wildTook.
	wildFrom   []wildMatch
	groupDepth int
	groupOps   []*Op

	// Room for the first few entries of posted, unexpected and active, in
	// the rank itself: one allocation and cache line less each, for ranks
	// that keep a message or two in flight.
	postedBuf, unexpectedBuf, activeBuf [2]*Op
}

// activeBase is the request id of active[0].
func (rk *rank) activeBase() uint64 { return rk.nextReq + 1 - uint64(len(rk.active)) }

// Engine is the deterministic simulation core: matching, modes, requests,
// streams, groups, the virtual clock and the event queue. It has no goroutines:
// a driver calls Next to learn which rank runs, then makes that rank's calls.
type Engine struct {
	cfg     Config
	eager   int64
	latency int64
	// lastBytes and lastCost memoize transferTime: most messages of a run
	// have the size of the one before.
	lastBytes, lastCost int64
	bw                  float64
	rng                 *rand.PCG // the ties of the event queue (a concrete type: one call less per event)
	ranks               []rank
	queue               eventQueue
	now                 int64
	problems            []Problem
	stuck               bool
	nDone               int
	nCut                int // ranks whose record ended early (Cut)
	sync                bool
	mutate              bool
	scribble            bool // mutate:scribble=true: pending receive buffers hold garbage until delivery
	slab                []Op
	slabSize            int
	// nextSlab brings the big slab after this one, made and touched on
	// another goroutine (see bigSlabAhead); nil until the first big slab.
	nextSlab chan []Op
	// freeOps is the last op released, reused before the slab; each free
	// op's match is the one released before it. (A list through the ops,
	// not a slice: a replay releasing millions of ops would grow a slice of
	// them, copying it at each doubling.)
	freeOps *Op
	// snaps hold the eager copies of payloads (see Op.snap), freeSnaps
	// their free slots.
	snaps     [][]byte
	freeSnaps []int32
	inPost    *Op // the send being posted, while its envelope is matched synchronously
	comms     map[int]*comm
	spareIx   []*matchIndex // emptied matching indexes, for the next queue that grows (see matchQueue)
	// pollLimit parks a rank after that many fruitless polls; nParked
	// counts the parked ranks (see livelock.go).
	pollLimit int
	nParked   int
	bsend     *bsendState // attached buffers (bsend.go); nil until used
	posts     postAhead   // forecast posts (WillPost)
	nIndexed  int         // matching queues indexed now (see WantsForecasts)
	opsMade   int         // ops taken from slabs: the most ever live at once
}

// The sizes of op slabs.
const (
	minSlab = 16
	maxSlab = 256
	// An engine that has made bigSlabAfter ops takes bigSlab at a time, on
	// huge pages (see package hugepage).
	bigSlabAfter = 1 << 16
	bigSlab      = 1 << 14
)

// New returns an engine for cfg.
func New(cfg Config) *Engine {
	e := &Engine{cfg: cfg}
	e.eager = cfg.EagerLimit
	if e.eager == 0 {
		e.eager = DefaultEagerLimit
	}
	e.latency = int64(cfg.Latency)
	if e.latency == 0 {
		e.latency = int64(DefaultLatency)
	}
	e.bw = cfg.Bandwidth
	if e.bw == 0 {
		e.bw = DefaultBandwidth
	}
	e.pollLimit = cfg.PollLimit
	switch {
	case e.pollLimit == 0:
		e.pollLimit = DefaultPollLimit
	case e.pollLimit < 0:
		e.pollLimit = math.MaxInt
	}
	e.rng = rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)
	if cfg.Faults != nil {
		e.sync = cfg.Faults.Sync()
		e.mutate = cfg.Faults.Mutate()
		if s, ok := cfg.Faults.(interface{ Scribble() bool }); ok {
			e.scribble = e.mutate && s.Scribble()
		}
	}
	e.ranks = make([]rank, cfg.Ranks) // side by side: ring neighbours share cache lines
	for i := range e.ranks {
		rk := &e.ranks[i]
		rk.id = i
		rk.posted.list, rk.unexpected.list, rk.active = rk.postedBuf[:0], rk.unexpectedBuf[:0], rk.activeBuf[:0]
		e.pushResume(0, i)
	}
	if cfg.BsendOverhead > 0 {
		e.bsendOn()
	}
	for _, g := range cfg.Comms {
		if g.ID == 0 {
			continue // the world: every rank
		}
		c := e.comm(g.ID)
		for _, r := range g.Ranks {
			if r >= 0 && r < len(c.members) {
				c.members[r] = true
			}
		}
	}
	return e
}

// Size is the number of ranks.
func (e *Engine) Size() int { return len(e.ranks) }

// Clock is the virtual time of rank r in nanoseconds.
func (e *Engine) Clock(r int) int64 { return e.ranks[r].clock }

// Problems returns what the run got wrong so far, in the order found.
func (e *Engine) Problems() []Problem { return e.problems }

// Stuck reports whether the run stopped because no rank could progress.
func (e *Engine) Stuck() bool { return e.stuck }

// pushResume queues the resume of rank r at time t; every entry draws its
// tie from the seeded generator when it is queued.
func (e *Engine) pushResume(t int64, r int) {
	e.queue.add(t, e.rng.Uint64(), uint64(evResume)<<32|uint64(uint32(r)))
}

// pushOp queues the arrival or the completion of op at time t.
func (e *Engine) pushOp(t int64, kind evKind, op *Op) {
	tie := e.rng.Uint64()
	slot, ok := e.queue.tryHold(op)
	if !ok {
		slot = e.queue.hold(op)
	}
	e.queue.add(t, tie, uint64(kind)<<32|uint64(slot))
}

// Next processes queued events until a rank is to run and returns it. ok is
// false when no rank can run: either every rank is done, or the run is stuck
// (see Stuck), in which case the engine has recorded a stuck Problem.
func (e *Engine) Next() (r int, ok bool) {
	for e.queue.len() > 0 {
		x := e.queue.next()
		t := x.time()
		if t > e.now {
			e.now = t
		}
		switch x.kind() {
		case evResume:
			r := int(x.slot())
			rk := &e.ranks[r]
			if rk.state == stateDone {
				continue
			}
			if t > rk.clock {
				rk.clock = t
			}
			if c := rk.blockedIn; c != nil {
				e.finishCall(c, rk.clock)
			}
			rk.state = stateReady
			rk.wait = waitNone
			rk.probing = false
			rk.waitOn = nil
			rk.waitSt = nil
			rk.blockedIn = nil
			return r, true
		case evArrive:
			if e.nParked != 0 {
				e.changed(t)
			}
			op, ok := e.queue.tryTake(x.slot())
			if !ok {
				op = e.queue.take(x.slot())
			}
			e.arrive(op)
		case evComplete:
			if e.nParked != 0 {
				e.changed(t)
			}
			op, ok := e.queue.tryTake(x.slot())
			if !ok {
				op = e.queue.take(x.slot())
			}
			e.transferDone(op)
		}
	}
	if e.nDone < len(e.ranks) && !e.stuck {
		e.stuck = true
		if p := e.stuckProblem(); p.Cycle != nil || e.nCut == 0 {
			// With a rank's record cut short, a hang without a cycle may be
			// the cut's doing (that rank would have sent, or finished):
			// no finding. A cycle among the blocked ranks is theirs alone.
			p.names = e.cfg.Names
			e.problems = append(e.problems, p)
		}
	}
	return -1, false
}

// Blocked reports whether rank r is blocked (only meaningful once Next said
// the run is stuck).
func (e *Engine) Blocked(r int) bool { return e.ranks[r].state == stateBlocked }

// BlockedOp returns the call rank r is blocked in, or nil.
func (e *Engine) BlockedOp(r int) *Op { return e.ranks[r].blockedIn }

// mayContinue says whether the running rank may go on without yielding: no
// queued event is earlier than its clock.
func (e *Engine) mayContinue(rk *rank) bool {
	return e.queue.len() == 0 || rk.clock <= e.queue.minTime()
}

func (e *Engine) newOp(r int, kind trace.Op) *Op {
	rk := &e.ranks[r]
	var op *Op
	if op = e.freeOps; op != nil {
		e.freeOps = op.match
		// Zeroed, then set (a slab's ops are zero already: a replay of many
		// ranks with all their ops live at once, an all-to-all's, would
		// write each twice), field by field: *op = Op{} costs more
		// instructions (ReplayRing: +12 a reuse). (TestNewOpReusesAsFresh
		// fails if a field is missing here.) Its opExt, if any, is kept
		// for the new op, zeroed: an op that had one (a wait's, a live
		// run's message) is likely reused for another that needs one.
		op.Rank, op.Peer, op.Tag, op.Comm, op.match, op.DoneT = 0, 0, 0, 0, nil, 0
		op.Req, op.Kind, op.Dtype, op.Mode, op.Err = 0, 0, 0, 0, 0
		op.Forced, op.Flag, op.Dropped, op.bits = false, false, false, 0
		op.MatchRank, op.Source, op.StatusTag = 0, 0, 0
		op.MatchSeq, op.StatusCnt, op.Bytes, op.Seq = 0, 0, 0, 0
		op.PostT, op.Count, op.Site = 0, 0, 0
		if x := op.ext; x != nil {
			*x = opExt{}
		}
	} else {
		if len(e.slab) == 0 {
			// One allocation for many ops (the GC frees a slab once none is
			// referenced); small at first, since an engine of a few calls
			// is made per explored seed.
			e.slabSize = min(maxSlab, max(minSlab, 2*e.slabSize))
			if e.opsMade >= bigSlabAfter {
				// An engine this big (a replay of many ranks) keeps most
				// of its heap live and touches it at random: on 4 KiB
				// pages each first touch is a page fault and each visit
				// a likely TLB miss. Huge pages for the slab and for the
				// rest of the heap mapped around it (a 1024-rank
				// all-to-all: 185 K faults a replay -> 50 K).
				e.slab = e.takeBigSlab()
			} else {
				e.slab = make([]Op, e.slabSize)
			}
		}
		op = &e.slab[0]
		e.slab = e.slab[1:]
		e.opsMade++
	}
	op.Rank, op.Seq, op.Kind, op.PostT = int32(r), rk.seq, kind, rk.clock
	op.MatchRank, op.Source = trace.NoRank, trace.NoRank
	rk.seq++
	if e.nParked != 0 && !isPoll(kind) {
		e.changed(rk.clock) // a call that may change the world: parked ranks poll again
	}
	return op
}

// takeBigSlab returns a big slab, made and touched ahead on another
// goroutine, and starts making the one after it.
//
// Why ahead: the first touch of each page of a fresh slab is a page fault
// in which the kernel zeroes the page (and, on a VM, the host backs it):
// a fresh process's 1024-rank all-to-all spent an eighth of its time
// there, in the middle of its posts. Made on another goroutine, the
// faults are taken on another core while the engine works; the engine
// waits only if it outruns the maker. At most one slab is made ahead,
// and the goroutine ends once it has handed it over (the channel holds
// it), so an engine dropped mid-replay leaves nothing running.
func (e *Engine) takeBigSlab() []Op {
	var s []Op
	if e.nextSlab == nil {
		e.nextSlab = make(chan []Op, 1)
		s = makeBigSlab()
	} else {
		s = <-e.nextSlab
	}
	go func(c chan<- []Op) { c <- makeBigSlab() }(e.nextSlab)
	return s
}

// makeBigSlab makes a slab of bigSlab ops on huge pages (and advises the
// heap mapped around it), and writes to each of its pages so that they
// are backed by the time the engine takes it.
func makeBigSlab() []Op {
	s := hugepage.Make[Op](bigSlab)
	hugepage.AdviseArena(unsafe.Pointer(&s[0]))
	const perPage = 4096 / int(unsafe.Sizeof(Op{}))
	for i := 0; i < len(s); i += perPage {
		s[i].Rank = 0
	}
	return s
}

// describe is Describe in the engine's vocabulary (Config.Names).
func (e *Engine) describe(op *Op) string { return DescribeIn(e.cfg.Names, op) }

func (e *Engine) observePost(op *Op) {
	if e.cfg.Observer != nil {
		e.cfg.Observer.Posted(op)
	}
}

func (e *Engine) complete(op *Op, t int64) {
	if op.bits&bitDone != 0 {
		return
	}
	op.bits |= bitDone
	op.DoneT = t
	if e.cfg.Observer != nil {
		e.cfg.Observer.Completed(op)
	}
	if op.bits&bitStream != 0 {
		op.strm().opDone(e, op, t)
	}
	if op.bits&bitAwaited != 0 {
		// The rank is blocked in a wait-all that counts on this op.
		op.bits &^= bitAwaited
		rk := &e.ranks[op.Rank]
		if rk.waitLeft--; rk.waitLeft == 0 {
			e.wake(rk, t)
		}
		return
	}
	rk := &e.ranks[op.Rank]
	if rk.state == stateBlocked && rk.wait == waitAny && e.waitSatisfied(rk) {
		e.wake(rk, t)
	}
}

// wake queues the resume of a blocked rank whose wait is over at time t.
func (e *Engine) wake(rk *rank, t int64) {
	rk.state = stateReady
	e.pushResume(max(t, rk.clock), rk.id)
}

func (e *Engine) waitSatisfied(rk *rank) bool {
	switch rk.wait {
	case waitAll:
		for _, op := range rk.waitOn {
			if op.bits&bitDone == 0 {
				return false
			}
		}
		return true
	case waitAny:
		for _, op := range rk.waitOn {
			if op.bits&bitDone != 0 {
				return true
			}
		}
		return len(rk.waitOn) == 0
	case waitStream:
		return rk.waitSt.empty()
	}
	return true
}

func (e *Engine) problem(p Problem) {
	if p.names == nil {
		p.names = e.cfg.Names
	}
	for _, op := range p.Ops {
		op.bits |= bitKept
	}
	e.problems = append(e.problems, p)
}

// Release hands back an op its driver no longer refers to, for NewOp to
// reuse. The engine keeps it instead while it may still touch or report the
// op: not yet complete, a request not yet retired, a send whose transfer is
// not over, a stream op, a send an AnySource receive took, or an op a
// Problem names. A driver must not release an op anything of its own (or an
// Observer) still holds.
func (e *Engine) Release(op *Op) {
	// Line 0 alone tells (see Op and opBits): the others stay out of the
	// caches unless they hold a buffer to let go.
	// (A wildcard receive names the send it took, wildTaken: a replay
	// compares it with the recording's choice after both ends completed.)
	if op.bits&bitDone == 0 || op.bits&(bitKept|bitWildTaken|bitActive|bitStream) != 0 {
		return
	}
	if op.Kind.IsSend() && op.bits&bitDelivered == 0 {
		// An eager send completes before its transfer is over: the transfer
		// releases it at its end (if it ever matches).
		op.bits |= bitReleased
		return
	}
	// The peer's match may still point here: nothing reads it once both ends
	// completed (observers see ops only at completion), and clearing it
	// would cost a cache miss on the peer per release.
	// (An eager copy is gone too: the send's delivery dropped it.) A
	// message posted without a buffer has none to let go (and message ops
	// have no Reqs): newOp zeroes the rest when it reuses the op.
	if op.bits&bitNoData == 0 && op.ext != nil {
		op.ext.data, op.ext.reqs = nil, nil
	}
	op.bits &^= bitDone // a second Release of the same op is a no-op
	e.pushFree(op)
}

// pushFree adds op, released, to the ops newOp reuses.
func (e *Engine) pushFree(op *Op) {
	op.match = e.freeOps
	e.freeOps = op
}

// ErrRunStuck is returned by calls made after the run was found stuck.
var ErrRunStuck = errors.New("run is stuck")
