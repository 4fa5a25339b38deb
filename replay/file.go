package replay

import (
	"github.com/p2ptrace/p2ptrace/verdict"
	"runtime"
	"strconv"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Trace is an opened trace file, ready to replay: it streams each rank's
// events block by block, so a trace bigger than memory replays.
type Trace struct {
	r          *trace.Reader
	rules      Rules
	prefetches prefetches // of the Sources Open returned
}

// OpenTrace opens a trace file (errors wrap trace.ErrNotTrace, ErrDamaged, ErrNewerVersion).
func OpenTrace(path string) (*Trace, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	return &Trace{r: r, rules: DefaultRules(r.Header())}, nil
}

// SetRules chooses the semantics Open's sources replay under (OpenTrace
// picks DefaultRules).
func (t *Trace) SetRules(r Rules) { t.rules = r }

// Rules are the semantics Open's sources replay under.
func (t *Trace) Rules() Rules { return t.rules }

// Close releases the file. Sources from Open stop reading it.
func (t *Trace) Close() error {
	t.prefetches.closeAll()
	return t.r.Close()
}

// Header is the trace's header.
func (t *Trace) Header() trace.Header { return t.r.Header() }

// Incomplete reports a recording that was cut short.
func (t *Trace) Incomplete() bool { return t.r.Incomplete() }

// Config is the replay configuration the recording ran with.
func (t *Trace) Config() Config {
	h := t.r.Header()
	return Config{Seed: h.Seed, EagerLimit: h.EagerLimit, Latency: h.LatencyNS, Bandwidth: h.BandwidthBps, BsendOverhead: h.BsendOverhead, Comms: h.Comms, Unstarted: h.Unstarted,
		AsyncMatches: torchTrace(h), Names: trace.NamesOf(&h)}
}

// Site renders a site id as "file:line".
func (t *Trace) Site(id uintptr) string {
	s, ok := t.r.Site(uint32(id))
	if !ok || s.File == "" {
		return ""
	}
	return s.File + ":" + strconv.Itoa(s.Line)
}

// Open returns a fresh Source over the trace (an Opener). With a core to
// spare (GOMAXPROCS > 1) it decodes the ranks' events ahead of the replay,
// in goroutines of its own (see decodingSource), until they are read, the
// Trace is closed, or the Source is dropped; on one core it decodes on the
// replay's goroutine, as OpenDirect does.
func (t *Trace) Open() (Source, error) {
	if runtime.GOMAXPROCS(0) == 1 {
		return t.OpenDirect()
	}
	src, err := openDecoding(t)
	if err != nil {
		return nil, err
	}
	return t.withRules(src), nil
}

// OpenDirect returns a fresh Source over the trace that decodes on the
// goroutine that reads it (an Opener): for callers that already keep every
// core busy with replays of their own (check's workers), where decoders
// ahead would only compete with them and hold batches of every rank.
func (t *Trace) OpenDirect() (Source, error) {
	src := &fileSource{r: t.r, cursors: make([]*trace.Cursor, t.r.Ranks())}
	for i := range src.cursors {
		src.cursors[i] = t.r.Rank(i)
	}
	return t.withRules(src), nil
}

func (t *Trace) withRules(src Source) Source {
	if t.rules == RulesNCCL {
		return NCCLSource(src)
	}
	return src
}

// fileSource reads each rank's events with a cursor of the trace's reader.
// A replay reads them in its own form (readRefs, nextRefs), a few at a
// time, without the Done events it does not read (see fillShort).
type fileSource struct {
	r       *trace.Reader
	cursors []*trace.Cursor
	err     error
	// For nextRefs: each rank's last run of events, its filter, and
	// whether its cursor has ended.
	runs    []batch
	filters []doneFilter
	ended   []bool
}

// directRun is how many events of a rank nextRefs converts at once.
const directRun = 16

// Payload returns a payload the trace stored (record --payloads).
func (s *fileSource) Payload(hash uint64) ([]byte, bool) { return s.r.Payload(hash) }

func (s *fileSource) Ranks() int { return len(s.cursors) }

func (s *fileSource) Next(r int, ev *trace.Event) bool {
	if s.runs != nil {
		if s.err == nil {
			s.err = errMixedReads
		}
		return false
	}
	if s.cursors[r].Next(ev) {
		return true
	}
	s.noteErr(r)
	return false
}

// noteErr notes the error that ended rank r's cursor, if any.
func (s *fileSource) noteErr(r int) {
	if err := s.cursors[r].Err(); err != nil && s.err == nil {
		s.err = err
	}
}

// readRefs readies the Source for nextRefs, before its first read.
func (s *fileSource) readRefs(sendDones bool) {
	if s.runs != nil {
		return
	}
	s.runs = make([]batch, len(s.cursors))
	s.filters = make([]doneFilter, len(s.cursors))
	s.ended = make([]bool, len(s.cursors))
	for r := range s.runs {
		s.filters[r].sendDones = sendDones
	}
}

// nextRefs converts rank r's next events: they stay valid until the
// Source's next call for the rank.
func (s *fileSource) nextRefs(r int) ([]event, []uint64) {
	if s.runs == nil {
		s.readRefs(true)
	}
	b := &s.runs[r]
	if s.ended[r] {
		return nil, nil
	}
	if b.short == nil {
		b.short = make([]event, directRun)
	}
	b.n = 0
	if !fillShort(b, s.cursors[r], &s.filters[r]) {
		s.ended[r] = true
		s.noteErr(r)
		if b.n == 0 {
			b.short = nil
			return nil, nil
		}
	}
	return b.short[:b.n], b.reqs
}

func (s *fileSource) Err() error { return s.err }

// Reader is the trace's reader, for what a replay does not read.
func (t *Trace) Reader() *trace.Reader { return t.r }

// Recorded returns the findings the recording itself made (a live run's
// verdict, or a merged job's), as the trace header stores them.
func (t *Trace) Recorded() []Finding { return t.r.Header().Findings }

// Ends says where each unfinished rank's record ends in a trace cut short
// (status running: killed; crashed: a rank died or the run was
// interrupted): its last recorded call and why the record stops there.
// Ranks that finished are left out. A complete trace has none, nor has a
// hung one: its ranks' records end in the calls the hang names.
func (t *Trace) Ends() ([]verdict.RankEnd, error) {
	h := t.r.Header()
	if h.Status != trace.StatusRunning && h.Status != trace.StatusCrashed {
		return nil, nil
	}
	why := EndReason(h)
	var ends []verdict.RankEnd
	var ev trace.Event
	for rank := range t.r.Ranks() {
		c := t.r.Rank(rank)
		var last *verdict.OpRef
		finished := false
		for c.Next(&ev) {
			if ev.Kind != trace.KindPost {
				continue
			}
			o := refEvent(trace.NamesOf(&h), &ev, t.Site)
			last, finished = &o, ev.Op == trace.OpFinalize
		}
		if err := c.Err(); err != nil {
			return nil, err
		}
		if !finished {
			ends = append(ends, verdict.RankEnd{Rank: rank, Last: last, Why: why})
		}
	}
	return ends, nil
}

// EndReason says in words why the ranks' records of a trace cut short end
// where they do, from its status and note.
func EndReason(h trace.Header) string {
	var why string
	switch h.Status {
	case trace.StatusRunning:
		why = "the recording was cut short (the program or the recorder was killed): no end was written"
	case trace.StatusHung:
		why = "the run was stopped as hung"
	case trace.StatusCrashed:
		why = "the run crashed or was stopped"
	default:
		why = "the recording ended with status " + string(h.Status)
	}
	if h.FindingsVersion > 0 && h.Message != "" {
		why += " (" + h.Message + ")"
	}
	return why
}
