package gpu

import (
	"time"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Environment variables through which `p2ptrace record` asks a program built on
// gpu to record itself. Without P2PTRACE_TRACE nothing is recorded.
const (
	EnvTrace    = "P2PTRACE_TRACE"    // path of the trace file to write
	EnvHash     = "P2PTRACE_HASH"     // full (default), sample or off
	EnvEager    = "P2PTRACE_EAGER"    // eager limit in bytes, overriding the program's
	EnvSeed     = "P2PTRACE_SEED"     // scheduler seed, overriding the program's
	EnvPayloads = "P2PTRACE_PAYLOADS" // "1": store payloads (size-capped)
	EnvForce    = "P2PTRACE_FORCE"    // "1": overwrite an existing trace file
	// EnvForceMatch, "RANK:SEQ=SRC": restrict one AnySource receive to one
	// sender (ForceMatch), for check's re-runs of a recorded program.
	EnvForceMatch = "P2PTRACE_FORCE_MATCH"

	// EnvReported "1": p2ptrace record prints the findings itself, so a
	// Launch error names them in one line instead of repeating the report.
	EnvReported = "P2PTRACE_REPORTED"
	// EnvCommand is the command line as the user gave it (a JSON array of
	// strings), recorded instead of os.Args (a temporary build path).
	EnvCommand = "P2PTRACE_COMMAND"

	// EnvTimeout bounds the run in wall-clock time (a Go duration, as
	// RunTimeout); EnvPollLimit sets PollLimit.
	EnvTimeout   = "P2PTRACE_TIMEOUT"
	EnvPollLimit = "P2PTRACE_POLL_LIMIT"
)

// Hash modes of a recording (trace.PayloadHash).
const (
	HashFull   = trace.HashFull   // every byte of every payload
	HashSample = trace.HashSample // at most trace.HashSampleBytes spread over the payload
	HashOff    = trace.HashOff
)

// EventSink receives the events of a recorded run: a trace file's writer
// (*trace.Writer), or anything that keeps them in memory.
type EventSink interface {
	Append(ev *trace.Event) // the event is only valid during the call
	AddSite(s trace.Site)
}

// traceFile is a trace file being written (*trace.Writer).
type traceFile interface {
	SetHeader(func(*trace.Header))
	Close(status trace.Status, message string) error
}

// payloadSink is an EventSink that also stores payloads.
type payloadSink interface {
	AddPayload(hash uint64, data []byte)
}

// RecordTo records the run into sink (hashing every payload fully), as
// P2PTRACE_TRACE does into a file.
func RecordTo(sink EventSink) Option { return func(c *config) { c.sink = sink } }

// RecordPayloads makes RecordTo also store payloads, as P2PTRACE_PAYLOADS=1
// does, when the sink takes them (a *trace.Writer does, size-capped).
func RecordPayloads() Option { return func(c *config) { c.payloads = true } }

// recorder is the engine Observer that turns ops into trace events.
type recorder struct {
	w        EventSink
	file     traceFile // set when recording to a file of our own
	sites    *siteTable
	siteIDs  map[uintptr]uint32
	hash     string
	payloads bool
	start    time.Time
	ev       trace.Event
	// mutations holds the in-flight mutations seen: a send buffer whose hash
	// changed between post and completion.
	mutations []*sim.Op
	// recvs are the nonblocking receives whose buffers are watched, and
	// recvWrites the writes into them seen (see recvwrite.go).
	recvs      []pendingRecv
	recvWrites []recvWrite
	wallNow    int64 // wall ns since start, refreshed every wallEvery events
	wallN      int
	reported   bool // EnvReported: the recorder prints the findings
}

// wallEvery is how many events share one reading of the wall clock: reading
// it costs more than the rest of an event on virtual machines without a vDSO
// clock, and wall times only serve to place ops on a timeline.
const wallEvery = 32

func (rec *recorder) wall() int64 {
	if rec.wallN == 0 {
		rec.wallNow = int64(time.Since(rec.start))
		rec.wallN = wallEvery
	}
	rec.wallN--
	return rec.wallNow
}

func newRecorder(sink EventSink, hash string, payloads bool, sites *siteTable) *recorder {
	return &recorder{w: sink, sites: sites, siteIDs: map[uintptr]uint32{}, hash: hash, payloads: payloads, start: time.Now()}
}

func (rec *recorder) addPayload(hash uint64, data []byte) {
	if p, ok := rec.w.(payloadSink); ok && rec.payloads {
		p.AddPayload(hash, data)
	}
}

func (rec *recorder) hashOf(b []byte) uint64 { return trace.PayloadHash(rec.hash, b) }

func (rec *recorder) site(pc uintptr) uint32 {
	if pc == 0 {
		return 0
	}
	if id, ok := rec.siteIDs[pc]; ok {
		return id
	}
	s := rec.sites.resolve(pc)
	id := uint32(len(rec.siteIDs) + 1)
	rec.siteIDs[pc] = id
	rec.w.AddSite(trace.Site{ID: id, Function: s.Function, File: s.File, Line: s.Line})
	return id
}

func (rec *recorder) Posted(op *sim.Op) {
	rec.checkRecvs(op)
	ev := &rec.ev
	reqs := ev.Reqs[:0]
	*ev = trace.Event{Kind: trace.KindPost, Rank: int32(op.Rank), Seq: op.Seq, Op: op.Kind,
		Peer: int32(op.Peer), Tag: int32(op.Tag), Comm: int32(op.Comm), Stream: int32(op.Stream),
		Dtype: op.Dtype, Count: op.Count, Bytes: op.Bytes, Req: op.Req, Site: rec.site(op.Site),
		PostVT: op.PostT, PostWall: rec.wall()}
	if op.Kind == trace.OpCompute {
		ev.Duration, ev.Count = op.Count, 0
	}
	for _, q := range op.Reqs {
		reqs = append(reqs, q.Req)
	}
	ev.Reqs = reqs
	if op.Kind.IsSend() && op.Data != nil {
		ev.HashPost = rec.hashOf(op.Data)
		op.HashPost = ev.HashPost
		rec.addPayload(ev.HashPost, op.Data)
	}
	rec.w.Append(ev)
}

func (rec *recorder) Completed(op *sim.Op) {
	if len(rec.recvs) > 0 && op.Kind.IsRecv() {
		rec.recvLanded(op)
	}
	ev := &rec.ev
	reqs := ev.Reqs[:0]
	*ev = trace.Event{Kind: trace.KindDone, Rank: int32(op.Rank), Seq: op.Seq, Op: op.Kind,
		MatchVT: op.MatchT, DoneVT: op.DoneT, DoneWall: rec.wall(),
		MatchRank: int32(op.MatchRank), MatchSeq: op.MatchSeq, Source: int32(op.Source),
		StatusTag: int32(op.StatusTag), StatusCnt: op.StatusCnt, Err: op.Err, Flag: op.Flag}
	ev.Reqs = reqs
	switch {
	case op.Kind == trace.OpWaitany:
		ev.Index, ev.Source = int32(op.Source), trace.NoRank
	case op.Kind.IsSend() && op.Data != nil:
		ev.HashPost = op.HashPost
		// An eager send's buffer is free once posted; a blocking send's cannot
		// change while the sender waits. Only the others can be mutated in flight.
		switch {
		case op.HostBlocked():
			ev.HashDone = op.HashPost // the sender waited in the call: unchanged, no second pass
		case !op.Eager() && op.HashPost != 0:
			ev.HashDone = rec.hashOf(op.Data)
			if trace.Mutated(op.HashPost, ev.HashDone) {
				rec.mutations = append(rec.mutations, op)
				// What a receiver reading the buffer at the latest legal moment
				// gets: with the payload at post, a report can show values.
				rec.addPayload(ev.HashDone, op.Data)
			}
		}
	case op.Kind.IsRecv() && op.Data != nil && op.Source >= 0 && op.DeliveredAtPost() && op.Matched() != nil && op.Matched().Bytes <= int64(len(op.Data)):
		ev.HashDone = op.Matched().HashPost // the data is the send's at post: no second pass
	case op.Kind.IsRecv() && op.Data != nil && op.Source >= 0:
		ev.HashDone = rec.hashOf(op.Data[:min(int64(len(op.Data)), op.StatusCnt*int64(max(op.Dtype.Size(), 1)))])
		rec.addPayload(ev.HashDone, op.Data)
	}
	rec.w.Append(ev)
}

// mutationProblems reports the in-flight mutations seen.
func (rec *recorder) mutationProblems() []sim.Problem {
	var out []sim.Problem
	for _, op := range rec.mutations {
		out = append(out, sim.InFlightMutation(op))
	}
	out = append(out, rec.recvWriteProblems()...)
	return out
}
