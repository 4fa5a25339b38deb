package mpi

import "github.com/p2ptrace/p2ptrace/recorder/trace"

// startKey is what an MPI_Start of a persistent request records of it: the
// request's op, envelope and buffer, as its init recorded them (the shim
// records neither call with the other's id).
type startKey struct {
	op, dtype       uint8
	peer, tag, comm int32
	addr            uint64
	count           int64
}

func startKeyOf(rec *record) startKey {
	return startKey{op: rec.Op, dtype: rec.Dtype, peer: rec.Peer, tag: rec.Tag, comm: rec.Comm, addr: rec.Addr, count: rec.Count}
}

// unstartedRequests lists, rank by rank in record order, the persistent
// requests made (MPI_Send_init ... MPI_Recv_init) and never started: an
// init whose op, envelope and buffer no MPI_Start or MPI_Startall of its
// rank started. Two inits of one envelope and buffer count as started if
// either was: a request may be left unnamed, never named wrongly.
func unstartedRequests(ranks []*rankData, siteText siteTextFunc) []trace.Unstarted {
	var out []trace.Unstarted
	for r, rd := range ranks {
		if rd == nil {
			continue
		}
		started := map[startKey]bool{}
		var inits []int
		for i := range rd.seg.recs {
			rec := &rd.seg.recs[i]
			switch {
			case rec.Type != recPost:
			case isInit(rec.Call) && rec.Req != 0:
				inits = append(inits, i)
			case rec.Call == callStart || rec.Call == callStartall:
				started[startKeyOf(rec)] = true
			}
		}
		for _, i := range inits {
			rec := &rd.seg.recs[i]
			if started[startKeyOf(rec)] {
				continue
			}
			out = append(out, trace.Unstarted{Rank: r, Call: callName(uint32(rec.Call)), Op: trace.Op(rec.Op),
				Peer: int(rec.Peer), Tag: int(rec.Tag), Comm: int(rec.Comm), Site: siteText(rd, rec.Module, rec.PC, rec.Site)})
		}
	}
	return out
}
