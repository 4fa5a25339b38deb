package replay

import (
	"strconv"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Trace is an opened trace file, ready to replay: it streams each rank's
// events block by block, so a trace bigger than memory replays.
type Trace struct {
	r     *trace.Reader
	rules Rules
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

// Close releases the file.
func (t *Trace) Close() error { return t.r.Close() }

// Header is the trace's header.
func (t *Trace) Header() trace.Header { return t.r.Header() }

// Incomplete reports a recording that was cut short.
func (t *Trace) Incomplete() bool { return t.r.Incomplete() }

// Config is the replay configuration the recording ran with.
func (t *Trace) Config() Config {
	h := t.r.Header()
	return Config{Seed: h.Seed, EagerLimit: h.EagerLimit, Latency: h.LatencyNS, Bandwidth: h.BandwidthBps}
}

// Site renders a site id as "file:line".
func (t *Trace) Site(id uintptr) string {
	s, ok := t.r.Site(uint32(id))
	if !ok || s.File == "" {
		return ""
	}
	return s.File + ":" + strconv.Itoa(s.Line)
}

// Open returns a fresh Source over the trace (an Opener).
func (t *Trace) Open() (Source, error) {
	src := &fileSource{r: t.r, cursors: make([]*trace.Cursor, t.r.Ranks())}
	for i := range src.cursors {
		src.cursors[i] = t.r.Rank(i)
	}
	if t.rules == RulesNCCL {
		return NCCLSource(src), nil
	}
	return src, nil
}

type fileSource struct {
	r       *trace.Reader
	cursors []*trace.Cursor
	err     error
}

// Payload returns a payload the trace stored (record --payloads).
func (s *fileSource) Payload(hash uint64) ([]byte, bool) { return s.r.Payload(hash) }

func (s *fileSource) Ranks() int { return len(s.cursors) }

func (s *fileSource) Next(r int, ev *trace.Event) bool {
	if s.cursors[r].Next(ev) {
		return true
	}
	if err := s.cursors[r].Err(); err != nil && s.err == nil {
		s.err = err
	}
	return false
}

func (s *fileSource) Err() error { return s.err }
