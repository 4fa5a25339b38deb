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

// loadRank reads the ops of one rank in program order.
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
				return nil, inputError(fmt.Errorf("%s: rank %d: done event of seq %d without a post event", r.Path(), rank, ev.Seq))
			}
			ops[i].Done, ops[i].HasDone = e, true
		}
	}
	if err := c.Err(); err != nil {
		return nil, inputError(err)
	}
	return ops, nil
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
