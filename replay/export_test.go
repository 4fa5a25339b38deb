package replay

import (
	"errors"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// ReplayEvents are a trace's events in memory as a trace file's Source
// hands them to a replay (Trace.Open): in the replay's form, without the
// Done events no replay reads. For benchmarks: the bound of a replay from
// the file.
type ReplayEvents struct {
	evs  [][]event
	reqs [][]uint64
}

// LoadReplayEvents reads every rank of t.
func LoadReplayEvents(t *Trace) (*ReplayEvents, error) {
	l := &ReplayEvents{evs: make([][]event, t.r.Ranks()), reqs: make([][]uint64, t.r.Ranks())}
	b := &batch{short: make([]event, 4096)}
	for r := range l.evs {
		c := t.r.Rank(r)
		var f doneFilter
		for more := true; more; {
			b.n = 0
			more = fillShort(b, c, &f)
			for _, e := range b.short[:b.n] {
				if e.nReqs > 0 {
					reqs := e.reqsIn(b.reqs)
					e.reqOff = uint32(len(l.reqs[r]))
					l.reqs[r] = append(l.reqs[r], reqs...)
				}
				l.evs[r] = append(l.evs[r], e)
			}
		}
		if err := c.Err(); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Source returns a fresh Source over the events, for Replay only.
func (l *ReplayEvents) Source() Source {
	return &replayEventsSource{l: l, pos: make([]int, len(l.evs))}
}

type replayEventsSource struct {
	l   *ReplayEvents
	pos []int
	err error
}

var errReplayOnly = errors.New("replay events: read by Replay only")

func (s *replayEventsSource) Ranks() int { return len(s.l.evs) }
func (s *replayEventsSource) Err() error { return s.err }
func (s *replayEventsSource) Next(int, *trace.Event) bool {
	s.err = errReplayOnly
	return false
}
func (s *replayEventsSource) readRefs(bool) {}

// nextRefs hands out all of rank r's events in one run.
func (s *replayEventsSource) nextRefs(r int) ([]event, []uint64) {
	p := s.pos[r]
	s.pos[r] = len(s.l.evs[r])
	return s.l.evs[r][p:], s.l.reqs[r]
}

// WithoutForecasts returns cfg with the driver's forecasts of posts off
// (see driver.forecast): a test compares replays with and without them.
func WithoutForecasts(cfg Config) Config {
	cfg.noForecasts = true
	return cfg
}
