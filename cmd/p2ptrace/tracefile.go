package main

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// openTrace opens a trace; its errors are input errors (exit 2).
func openTrace(path string) (*trace.Reader, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, inputError(err)
	}
	return r, nil
}

// opRec is one op of a rank: its post event and, once it completed, its
// done event.
type opRec struct {
	Post    trace.Event
	Done    trace.Event
	HasDone bool
}

// loadRank reads the ops of one rank in program order, all at once: what
// scanRank falls back on for a rank whose ops it cannot stream.
func loadRank(r *trace.Reader, rank int) ([]opRec, error) {
	var ops []opRec
	index := map[uint64]int{}
	c := r.Rank(rank)
	var ev trace.Event
	for c.Next(&ev) {
		e := ev
		e.Reqs = append([]uint64(nil), ev.Reqs...)
		switch ev.Kind {
		case trace.KindPost:
			index[ev.Seq] = len(ops)
			ops = append(ops, opRec{Post: e})
		case trace.KindDone:
			i, ok := index[ev.Seq]
			if !ok {
				return nil, doneWithoutPost(r, rank, ev.Seq)
			}
			ops[i].Done, ops[i].HasDone = e, true
		}
	}
	if err := c.Err(); err != nil {
		return nil, inputError(err)
	}
	return ops, nil
}

func doneWithoutPost(r *trace.Reader, rank int, seq uint64) error {
	return inputError(fmt.Errorf("%s: rank %d: done event of seq %d without a post event", r.Path(), rank, seq))
}

// rankScan is what one pass over a rank's events says of its ops, so that
// show and export can print totals first and then stream the ops (eachOp)
// in a second pass, holding only the ops posted and not yet completed.
type rankScan struct {
	rank      int
	ops, done int64          // ops, and those that completed
	byOp      map[string]int // ops by name
	end       int64          // the latest virtual time of an op: its post or its completion
	// pending are the seqs of the ops that never completed: eachOp hands
	// them on at once instead of waiting for a completion to the end.
	pending map[uint64]bool
	// times, if asked for, is the time each op ends, by seq: its
	// completion, or its post if it never completed (where a flow arrow
	// of export chrome ends).
	times []int64
	// loaded holds the ops of a rank whose seqs are not 0, 1, 2... in
	// order, or whose op completed twice (no recorder writes that): they
	// are read whole, as they always were.
	loaded []opRec
}

// scanRank makes the first pass over rank's events (see rankScan). Its
// errors are loadRank's.
func scanRank(r *trace.Reader, rank int, times bool) (*rankScan, error) {
	s := &rankScan{rank: rank, byOp: map[string]int{}, pending: map[uint64]bool{}}
	c := r.Rank(rank)
	var ev trace.Event
	dense := true
	for dense && c.Next(&ev) {
		switch ev.Kind {
		case trace.KindPost:
			if ev.Seq != uint64(s.ops) {
				dense = false
				break
			}
			s.ops++
			s.byOp[ev.Op.String()]++
			s.pending[ev.Seq] = true
			s.end = max(s.end, ev.PostVT)
			if times {
				s.times = append(s.times, ev.PostVT)
			}
		case trace.KindDone:
			switch {
			case ev.Seq >= uint64(s.ops):
				return nil, doneWithoutPost(r, rank, ev.Seq)
			case !s.pending[ev.Seq]:
				dense = false // completed twice
			default:
				delete(s.pending, ev.Seq)
				s.done++
				s.end = max(s.end, ev.DoneVT)
				if times {
					s.times[ev.Seq] = ev.DoneVT
				}
			}
		}
	}
	if err := c.Err(); err != nil {
		return nil, inputError(err)
	}
	if dense {
		return s, nil
	}
	ops, err := loadRank(r, rank)
	if err != nil {
		return nil, err
	}
	s = &rankScan{rank: rank, byOp: map[string]int{}, loaded: ops}
	for _, op := range ops {
		s.ops++
		s.byOp[op.Post.Op.String()]++
		s.end = max(s.end, op.Post.PostVT)
		if op.HasDone {
			s.done++
			s.end = max(s.end, op.Done.DoneVT)
		}
	}
	return s, nil
}

// endOf returns the time the op of sequence number seq ends (see
// rankScan.times, which scanRank must have been asked for), if there is
// such an op.
func (s *rankScan) endOf(seq uint64) (int64, bool) {
	if s.loaded != nil {
		op, ok := findOp(s.loaded, seq)
		if !ok {
			return 0, false
		}
		if op.HasDone {
			return op.Done.DoneVT, true
		}
		return op.Post.PostVT, true
	}
	if seq >= uint64(len(s.times)) {
		return 0, false
	}
	return s.times[seq], true
}

// eachOp hands the rank's ops to fn in program order, each with its
// completion: the second pass, after scanRank. An op waits in memory from
// its post to its completion (or is handed on at once if it never
// completes), so the memory is that of the ops in flight, not of the rank.
func eachOp(r *trace.Reader, s *rankScan, fn func(*opRec) error) error {
	if s.loaded != nil {
		for i := range s.loaded {
			if err := fn(&s.loaded[i]); err != nil {
				return err
			}
		}
		return nil
	}
	var q []opRec // posted, not handed on yet: q[i] is op base+i
	base := uint64(0)
	flush := func() error {
		for len(q) > 0 && (q[0].HasDone || s.pending[q[0].Post.Seq]) {
			if err := fn(&q[0]); err != nil {
				return err
			}
			q[0] = opRec{}
			q, base = q[1:], base+1
		}
		return nil
	}
	c := r.Rank(s.rank)
	var ev trace.Event
	for c.Next(&ev) {
		e := ev
		e.Reqs = append([]uint64(nil), ev.Reqs...)
		switch i := ev.Seq - base; {
		case ev.Kind == trace.KindPost:
			q = append(q, opRec{Post: e})
		case ev.Kind == trace.KindDone && ev.Seq >= base && i < uint64(len(q)):
			q[i].Done, q[i].HasDone = e, true
		default:
			// The first pass read other events than this one: the file
			// changed under us.
			return inputError(fmt.Errorf("%s: rank %d changed while it was read", r.Path(), s.rank))
		}
		if err := flush(); err != nil {
			return err
		}
	}
	if err := c.Err(); err != nil {
		return inputError(err)
	}
	for i := range q {
		if err := fn(&q[i]); err != nil {
			return err
		}
	}
	return nil
}

func siteString(r *trace.Reader, id uint32) string {
	if id == 0 {
		return "-"
	}
	s, ok := r.Site(id)
	if !ok {
		return fmt.Sprintf("site#%d", id)
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

func rankString(v int32, wildcard string) string {
	if v < 0 {
		return wildcard
	}
	return fmt.Sprint(v)
}
