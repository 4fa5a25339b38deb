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

// fieldSink is an EventSink told which groups of fields an event may set
// (a *trace.Writer): the gpu recorder's events of a kind always leave the
// same ones zero, which the trace encoder then need not compare.
type fieldSink interface {
	AppendFields(ev *trace.Event, set trace.Fields)
}

// allFields is the fieldSink of an EventSink without AppendFields.
type allFields struct{ EventSink }

func (s allFields) AppendFields(ev *trace.Event, _ trace.Fields) { s.Append(ev) }

// The groups of fields the recorder's post and done events may set; the
// others stay zero (see Posted and Completed).
const (
	postFields = trace.FieldsEnvelope | trace.FieldsHashPost
	doneFields = trace.FieldsStatus | trace.FieldsHashPost | trace.FieldsHashDone
)

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

// payloadHashAlgo is the function of the payload hashes the gpu runtime
// records (Header.HashAlgo): XXH3, whose vector code reads a payload about
// four times as fast as XXH64.
const payloadHashAlgo = trace.HashXXH3

// recorder is the engine Observer that turns ops into trace events.
type recorder struct {
	w      EventSink
	out    fieldSink   // w, told the fields set
	file   traceFile   // set when recording to a file of our own
	stored payloadSink // set when payloads are stored
	sites  *siteTable
	// siteIDs numbers the call sites seen; siteCache is a direct-mapped
	// cache in front of it (a map lookup per event cost a third of the
	// recorder's own work).
	siteIDs   map[uintptr]uint32
	siteCache [siteCacheSize]siteEntry
	hash      string // the mode
	hasher    trace.PayloadHasher
	start     time.Time
	// post and done are the events handed to Append, reused: each fills
	// every field it ever sets (assigning a whole Event literal costs a
	// copy of its 200 bytes with write barriers per event).
	post, done trace.Event
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

// siteCacheSize is the number of slots of recorder.siteCache, indexed by a
// byte of the pc.
const siteCacheSize = 256

type siteEntry struct {
	pc uintptr
	id uint32
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
	hasher, err := trace.NewPayloadHasher(payloadHashAlgo, hash)
	if err != nil {
		panic(err) // hash is one of the modes: the callers check
	}
	rec := &recorder{w: sink, sites: sites, siteIDs: map[uintptr]uint32{}, hash: hash, hasher: hasher, start: time.Now()}
	if f, ok := sink.(fieldSink); ok {
		rec.out = f
	} else {
		rec.out = allFields{sink}
	}
	if p, ok := sink.(payloadSink); ok && payloads {
		rec.stored = p
	}
	rec.post.Kind, rec.done.Kind = trace.KindPost, trace.KindDone
	return rec
}

// setHeader names the recording's hash mode and algorithm in h.
func (rec *recorder) setHeader(h *trace.Header) {
	h.HashMode, h.HashAlgo = rec.hash, payloadHashAlgo
}

func (rec *recorder) addPayload(hash uint64, data []byte) {
	if rec.stored != nil {
		rec.stored.AddPayload(hash, data)
	}
}

func (rec *recorder) hashOf(b []byte) uint64 { return rec.hasher.Hash(b) }

// siteMiss caches the id of pc in slot: 0 for pc 0, else pc's number,
// given (and added to the site table) the first time pc is seen.
func (rec *recorder) siteMiss(pc uintptr, slot *siteEntry) {
	if pc == 0 {
		*slot = siteEntry{}
		return
	}
	id, ok := rec.siteIDs[pc]
	if !ok {
		s := rec.sites.resolve(pc)
		id = uint32(len(rec.siteIDs) + 1)
		rec.siteIDs[pc] = id
		rec.w.AddSite(trace.Site{ID: id, Function: s.Function, File: s.File, Line: s.Line})
	}
	*slot = siteEntry{pc, id}
}

// Posted appends op's post event. It sets every field a post event has
// (the others stay zero from newRecorder): those of postFields, Seq,
// PostVT, PostWall, Req and Reqs.
func (rec *recorder) Posted(op *sim.Op) {
	if len(rec.recvs) > 0 {
		rec.checkRecvs(op)
	}
	ev := &rec.post
	ev.Rank, ev.Seq, ev.Op = op.Rank, op.Seq, op.Kind
	ev.Peer, ev.Tag, ev.Comm, ev.Stream = op.Peer, op.Tag, op.Comm, op.Stream()
	ev.Dtype, ev.Count, ev.Bytes, ev.Req, ev.Duration = op.Dtype, op.Count, op.Bytes, op.Req, 0
	// The call site's id: its cache slot's, filled on a miss (0 for an
	// unknown site, pc 0). The hit is here, inline.
	slot := &rec.siteCache[uint8(op.Site^op.Site>>8)]
	if slot.pc != op.Site {
		rec.siteMiss(op.Site, slot)
	}
	ev.Site = slot.id
	ev.PostVT, ev.PostWall = op.PostT, rec.wall()
	if op.Kind == trace.OpCompute {
		ev.Duration, ev.Count = op.Count, 0
	}
	ev.Reqs = ev.Reqs[:0]
	for _, q := range op.Reqs() {
		ev.Reqs = append(ev.Reqs, q.Req)
	}
	ev.HashPost = 0
	if op.Kind.IsSend() && op.Data() != nil {
		ev.HashPost = rec.hashOf(op.Data())
		op.SetHashPost(ev.HashPost)
		rec.addPayload(ev.HashPost, op.Data())
	}
	rec.out.AppendFields(ev, postFields)
}

// Completed appends op's done event. It sets every field a done event has
// (the others stay zero from newRecorder): those of doneFields, Seq,
// MatchVT, DoneVT, DoneWall and MatchSeq.
func (rec *recorder) Completed(op *sim.Op) {
	if len(rec.recvs) > 0 && op.Kind.IsRecv() {
		rec.recvLanded(op)
	}
	ev := &rec.done
	ev.Rank, ev.Seq, ev.Op = op.Rank, op.Seq, op.Kind
	ev.MatchVT, ev.DoneVT, ev.DoneWall = op.MatchT(), op.DoneT, rec.wall()
	ev.MatchRank, ev.MatchSeq, ev.Source = op.MatchRank, op.MatchSeq, op.Source
	ev.StatusTag, ev.StatusCnt, ev.Err, ev.Flag = op.StatusTag, op.StatusCnt, op.Err, op.Flag
	ev.Index, ev.HashPost, ev.HashDone = 0, 0, 0
	switch {
	case op.Kind == trace.OpWaitany:
		ev.Index, ev.Source = op.Source, trace.NoRank
	case op.Kind.IsSend() && op.Data() != nil:
		ev.HashPost = op.HashPost()
		// An eager send's buffer is free once posted; a blocking send's cannot
		// change while the sender waits. Only the others can be mutated in flight.
		switch {
		case op.HostBlocked():
			ev.HashDone = op.HashPost() // the sender waited in the call: unchanged, no second pass
		case !op.Eager() && op.HashPost() != 0:
			ev.HashDone = rec.hashOf(op.Data())
			if trace.Mutated(op.HashPost(), ev.HashDone) {
				rec.mutations = append(rec.mutations, op)
				// What a receiver reading the buffer at the latest legal moment
				// gets: with the payload at post, a report can show values.
				rec.addPayload(ev.HashDone, op.Data())
			}
		}
	case op.Kind.IsRecv() && op.Data() != nil && op.Source >= 0 && op.DeliveredAtPost() && op.Matched() != nil && op.Matched().Bytes <= int64(len(op.Data())):
		ev.HashDone = op.Matched().HashPost() // the data is the send's at post: no second pass
	case op.Kind.IsRecv() && op.Data() != nil && op.Source >= 0:
		ev.HashDone = rec.hashOf(op.Data()[:min(int64(len(op.Data())), op.StatusCnt*int64(max(op.Dtype.Size(), 1)))])
		rec.addPayload(ev.HashDone, op.Data())
	}
	rec.out.AppendFields(ev, doneFields)
}

// mutationProblems reports the in-flight mutations seen.
func (rec *recorder) mutationProblems() []sim.Problem {
	var out []sim.Problem
	for _, op := range rec.mutations {
		out = append(out, sim.InFlightMutation(nil, op))
	}
	out = append(out, rec.recvWriteProblems()...)
	return out
}
