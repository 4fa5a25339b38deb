package replay

import "github.com/p2ptrace/p2ptrace/recorder/trace"

// runSource reads a Source that hands out one event at a time (a
// program's own Source, or torch's NCCL conversion) a run at a time, as
// the in-memory and file sources hand theirs out: so the driver always
// sees a rank's next few calls, and forecasts their posts to the engine
// (see driver.forecast). It keeps every event (no Done is left out).
type runSource struct {
	src  Source
	full trace.Event // the source's event, reused
	// runs are the ranks' buffers, made at a rank's first event, of
	// firstRun events, and of plainRun once a run fills that: a header may
	// claim millions of ranks, most of which may have no events (or a few).
	runs [][]event
	reqs [][]uint64 // per rank, the Reqs of its run's last event
}

// plainRun is the most events runSource reads ahead of a rank; a rank's
// first run is at most firstRun.
const (
	plainRun = 64
	firstRun = 8
)

var _ refSource = (*runSource)(nil)

func (s *runSource) Ranks() int                       { return s.src.Ranks() }
func (s *runSource) Next(r int, ev *trace.Event) bool { return s.src.Next(r, ev) }
func (s *runSource) Err() error                       { return s.src.Err() }

func (s *runSource) readRefs(bool) {
	n := s.src.Ranks()
	s.runs = make([][]event, n)
	s.reqs = make([][]uint64, n)
}

// nextRefs reads rank r's next events, up to plainRun of them and up to
// the first with Reqs: the run's store is a copy of that event's Reqs (the
// source reuses its event's).
func (s *runSource) nextRefs(r int) ([]event, []uint64) {
	run := s.runs[r]
	n := 0
	for n < plainRun && s.src.Next(r, &s.full) {
		if n == len(run) {
			grown := make([]event, firstRun)
			if len(run) > 0 {
				grown = make([]event, plainRun)
			}
			copy(grown, run[:n])
			run = grown
			s.runs[r] = run
		}
		compact(&run[n], &s.full)
		n++
		if len(s.full.Reqs) > 0 {
			s.reqs[r] = append(s.reqs[r][:0], s.full.Reqs...)
			return run[:n], s.reqs[r]
		}
	}
	return run[:n], nil
}
