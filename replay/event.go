package replay

import "github.com/p2ptrace/p2ptrace/recorder/trace"

// event is what a replay reads of a trace.Event, in one cache line (64
// bytes, against trace.Event's 248): a replay of 1024 ranks reads each
// rank's events a few at a time, a rank after another in the engine's
// order, so most of its events come from memory, and their bytes, not
// their instructions, set its speed (a recorded ring: 290 ns an event
// with full events, for some 470 instructions). The fields a Done event
// has and a post has not share the post's places (see the accessors).
type event struct {
	seq   uint64
	count int64
	bytes int64
	// req is Req on a post; a Compute's Duration; MatchSeq on a Done.
	req uint64
	// peer is Peer on a post; MatchRank on a Done, Source on a probe's
	// (which matches nothing: its status names the message it found).
	peer int32
	// tag is Tag on a post; Index on a Done, StatusTag on a probe's.
	tag    int32
	comm   int32
	stream int32
	site   uint32
	// The event's Reqs are reqs[reqOff:reqOff+nReqs] of the store its
	// source hands out with it.
	reqOff, nReqs uint32
	op            trace.Op
	dtype         trace.Dtype
	flags         uint8 // eventDone, eventFlag, eventMutated
	// skipped counts the Done events before this one that its source left
	// out, since no replay reads them (see doneFilter): they count in
	// Outcome.Events.
	skipped uint8
}

const (
	eventDone    = 1 << iota // a Done event (trace.KindDone), else a post
	eventFlag                // a Done's Flag
	eventMutated             // a Done's hashes differ (trace.Mutated)
)

func (e *event) duration() int64  { return int64(e.req) }
func (e *event) matchRank() int32 { return e.peer }
func (e *event) matchSeq() uint64 { return e.req }
func (e *event) index() int32     { return e.tag }

// A probe's Done: the status of the message it found (see probeFound).
func (e *event) source() int32    { return e.peer }
func (e *event) statusTag() int32 { return e.tag }

// probeFound is ProbeFound of a probe's Done event.
func (e *event) probeFound() bool {
	return e.op == trace.OpProbe || (e.op == trace.OpIprobe && e.flag())
}
func (e *event) flag() bool    { return e.flags&eventFlag != 0 }
func (e *event) mutated() bool { return e.flags&eventMutated != 0 }
func (e *event) isDone() bool  { return e.flags&eventDone != 0 }

// events is how many events of the trace e stands for: itself and those
// left out before it.
func (e *event) events() int64 { return 1 + int64(e.skipped) }
func (e *event) reqsIn(store []uint64) []uint64 {
	return store[e.reqOff : e.reqOff+e.nReqs]
}

// compact writes into e what a replay reads of ev. A post's Reqs are the
// first len(ev.Reqs) of its store: set reqOff where they are in another (a
// Done's are never read).
func compact(e *event, ev *trace.Event) {
	// Each field written once (no zeroed literal first): decoders write
	// one per event of the trace.
	e.seq, e.count, e.bytes = ev.Seq, ev.Count, ev.Bytes
	e.comm, e.stream, e.site = ev.Comm, ev.Stream, ev.Site
	e.op, e.dtype, e.skipped, e.reqOff = ev.Op, ev.Dtype, 0, 0
	if ev.Kind == trace.KindDone {
		flags := uint8(eventDone)
		if ev.Flag {
			flags |= eventFlag
		}
		if trace.Mutated(ev.HashPost, ev.HashDone) {
			flags |= eventMutated
		}
		e.flags, e.nReqs = flags, 0
		e.req, e.peer, e.tag = ev.MatchSeq, ev.MatchRank, ev.Index
		if isProbe(ev.Op) {
			e.peer, e.tag = ev.Source, ev.StatusTag
		}
		return
	}
	e.flags, e.nReqs = 0, uint32(len(ev.Reqs))
	e.req, e.peer, e.tag = ev.Req, ev.Peer, ev.Tag
	if ev.Op == trace.OpCompute {
		e.req = uint64(ev.Duration)
	}
}

// doneFilter tells, for one rank's events in order, which Done events a
// replay reads, so that a source can leave out the others (most of them:
// each call of a trace has one) and the replay's goroutine reads half the
// events. The driver reads a Done event for four things: the answer of
// a call it reads ahead for (peekDone, peekFlag: Waitany, Test, Testall,
// Free), the recorded match of an AnySource receive (recordedDone), the
// recorded status of an AnySource probe (probeDone, when check forces
// it), and, under mutate, whether a send's buffer changed in flight
// (sendDones).
// It keeps every Done whose seq is that of such a post or, with
// sendDones, of a send; it keeps more than the driver needs (say, of a
// post the driver never reaches), never less.
type doneFilter struct {
	sendDones bool
	// watch are the seqs of the posts read whose Done is kept.
	watch map[uint64]struct{}
	// probeComm is the communicator of each AnySource probe whose Done is
	// awaited, by seq; follow the envelopes whose next receive is the one
	// that consumed a probed message (probe.go): a forced probe's replay
	// reads that receive's Done, though it names its source.
	probeComm map[uint64]int32
	follow    []envelope
}

// envelope is what a found probe's status names: the source, tag and
// communicator of the receive that consumed the probed message.
type envelope struct{ src, tag, comm int32 }

// keep reads the next event of the rank and says if a replay reads it.
// Its common cases come first: a post of an op not watched, a Done with
// nothing watched.
func (f *doneFilter) keep(ev *trace.Event) bool {
	if ev.Kind != trace.KindDone {
		if watchedOps>>(ev.Op&63)&1 == 0 { // an invalid op past 63 may be watched: never less
			return true
		}
	} else if f.dropsDone() {
		return false
	}
	return f.keepWatched(ev)
}

// dropsDone reports whether keep drops the next event if it is a Done,
// whatever its fields: it reads only its Kind.
func (f *doneFilter) dropsDone() bool { return len(f.watch) == 0 && !f.sendDones }

// watchedOps are the ops whose post may make the filter keep its Done:
// Recv, Irecv, Probe and Iprobe (from AnySource) and the calls the driver
// reads ahead for.
const watchedOps = 1<<trace.OpRecv | 1<<trace.OpIrecv | 1<<trace.OpProbe | 1<<trace.OpIprobe |
	1<<trace.OpWaitany | 1<<trace.OpTest | 1<<trace.OpTestall | 1<<trace.OpFree

// keepWatched is keep of a post of a watched op, or of a Done.
func (f *doneFilter) keepWatched(ev *trace.Event) bool {
	if ev.Kind != trace.KindDone {
		if (ev.Op == trace.OpRecv || ev.Op == trace.OpIrecv || isProbe(ev.Op)) && ev.Peer != trace.AnySource {
			if len(f.follow) == 0 || isProbe(ev.Op) || !f.followed(ev) {
				return true
			}
		} else if isProbe(ev.Op) {
			if f.probeComm == nil {
				f.probeComm = map[uint64]int32{}
			}
			f.probeComm[ev.Seq] = ev.Comm
		}
		if f.watch == nil {
			f.watch = map[uint64]struct{}{}
		}
		f.watch[ev.Seq] = struct{}{}
		return true
	}
	if f.sendDones && ev.Op.IsSend() {
		return true
	}
	if _, ok := f.watch[ev.Seq]; ok {
		delete(f.watch, ev.Seq)
		if comm, ok := f.probeComm[ev.Seq]; ok {
			delete(f.probeComm, ev.Seq)
			if ProbeFound(ev) {
				f.follow = append(f.follow, envelope{ev.Source, ev.StatusTag, comm})
			}
		}
		return true
	}
	return false
}

// followed reports whether post, a receive naming its source, is the
// first after a found AnySource probe with the envelope its status named
// (the one probeForce follows), and takes that envelope off the list.
func (f *doneFilter) followed(post *trace.Event) bool {
	for i, e := range f.follow {
		if e == (envelope{post.Peer, post.Tag, post.Comm}) {
			f.follow = append(f.follow[:i], f.follow[i+1:]...)
			return true
		}
	}
	return false
}
