package mpi

import "github.com/p2ptrace/p2ptrace/recorder/trace"

// recRef names record rec of rank rank's segment.
type recRef struct {
	rank, rec int
}

// syncOrder is the order the run's synchronization puts on records of its
// ranks: what happened before what whatever the timing (MPI-3.1 sec. 11.7
// calls accesses concurrent unless synchronization orders them). A rank's
// records are ordered by the rank; across ranks, a matched point-to-point
// message orders its send's post before its receive's completion, and a
// collective call orders every member's calls before it before every
// member's calls after it (as a barrier would: collectives that do not
// synchronize, a Bcast, are taken to, so the order may be more than MPI
// promises, never less). It is kept as vector clocks at the records asked
// for. One-sided synchronization (fences, locks, post-start-complete-wait)
// is not in it.
type syncOrder struct {
	ranks int
	at    map[recRef][]uint32
}

// newSyncOrder computes the order at the records of each rank for which
// want says yes. It walks the ranks' records as the run went, each rank
// until it must wait for another (a receive for its send, a collective for
// its members); when none can go on (a rank died, the run was cut short),
// the first waiting rank goes on without the order it waited for.
func newSyncOrder(ranks []*rankData, want func(r int, p *record) bool) *syncOrder {
	n := len(ranks)
	o := &syncOrder{ranks: n, at: map[recRef][]uint32{}}
	type sendKey struct {
		rank int
		seq  uint64
	}
	type collKey struct {
		comm int32
		k    int
	}
	type collective struct {
		size, arrived int
		vc            []uint32
	}
	sent := map[sendKey][]uint32{} // a send's clock at its post, until its receive takes it
	colls := map[collKey]*collective{}
	type rankState struct {
		vc      []uint32
		pos     int
		postAt  []int // record index -> post index (-1: none)
		doneAt  []int // record index -> post index whose done record it is (-1: none)
		entered map[int32]int
		joined  bool // arrived at the collective it is at
	}
	st := make([]rankState, n)
	for r, rd := range ranks {
		s := &st[r]
		s.vc = make([]uint32, n)
		if rd == nil {
			continue
		}
		s.postAt = make([]int, len(rd.seg.recs))
		s.doneAt = make([]int, len(rd.seg.recs))
		for i := range s.postAt {
			s.postAt[i], s.doneAt[i] = -1, -1
		}
		for i, ri := range rd.posts {
			if !rd.skip[i] {
				s.postAt[ri] = i
			}
			if rd.skip[i] {
				continue
			}
			// A receive completes at its done record; one without (the
			// receive of a matched probe's message, whose done record the
			// merge placed: placeMatched) at its post.
			if j := rd.doneOf[i]; j >= 0 {
				s.doneAt[j] = i
			} else if rd.op[i].IsRecv() {
				s.doneAt[ri] = i
			}
		}
		s.entered = map[int32]int{}
	}
	merge := func(dst, src []uint32) {
		for i, v := range src {
			dst[i] = max(dst[i], v)
		}
	}
	// step runs rank r's next record; it says false when the record waits
	// for another rank's (force: go on without it).
	step := func(r int, force bool) bool {
		rd, s := ranks[r], &st[r]
		ri := s.pos
		p := &rd.seg.recs[ri]
		if i := s.postAt[ri]; i >= 0 {
			op := rd.op[i]
			switch {
			case op.IsCollective():
				k := collKey{p.Comm, s.entered[p.Comm]}
				c := colls[k]
				if c == nil {
					c = &collective{size: int(p.Count), vc: make([]uint32, n)}
					colls[k] = c
				}
				if !s.joined {
					s.vc[r]++
					merge(c.vc, s.vc)
					c.arrived++
					s.joined = true
				}
				if c.arrived < c.size && !force {
					return false
				}
				merge(s.vc, c.vc)
				s.entered[p.Comm]++
				s.joined = false
			case op.IsSend() && rd.matchR[i] != trace.NoRank:
				s.vc[r]++
				sent[sendKey{r, rd.tseq[i]}] = append([]uint32(nil), s.vc...)
			}
		}
		if i := s.doneAt[ri]; i >= 0 && rd.op[i].IsRecv() && rd.matchR[i] != trace.NoRank {
			k := sendKey{int(rd.matchR[i]), rd.matchS[i]}
			vc, ok := sent[k]
			if !ok && !force {
				return false
			}
			merge(s.vc, vc)
			delete(sent, k)
		}
		if want(r, p) {
			s.vc[r]++ // (so that what it sends after this record carries it)
			o.at[recRef{r, ri}] = append([]uint32(nil), s.vc...)
		}
		s.pos++
		return true
	}
	for {
		moved, left := false, -1
		for r, rd := range ranks {
			if rd == nil {
				continue
			}
			for st[r].pos < len(rd.seg.recs) && step(r, false) {
				moved = true
			}
			if st[r].pos < len(rd.seg.recs) && left < 0 {
				left = r
			}
		}
		if left < 0 {
			return o
		}
		if !moved {
			step(left, true)
		}
	}
}

// before reports whether record x happened before record y by the run's
// synchronization (both asked for when the order was made): y's rank knew
// of x when it made y. Records of one rank are ordered by it.
func (o *syncOrder) before(x, y recRef) bool {
	if x.rank == y.rank {
		return x.rec < y.rec
	}
	vx, vy := o.at[x], o.at[y]
	if vx == nil || vy == nil {
		return false
	}
	return vx[x.rank] <= vy[x.rank]
}
