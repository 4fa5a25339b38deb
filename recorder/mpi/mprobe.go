package mpi

import (
	"cmp"
	"slices"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Matched probes (MPI 3.1 sec. 3.8.2). MPI_Mprobe, and MPI_Improbe when it
// sets flag, match a message as a receive would and take it off the
// matching queues: no other receive or probe can match it. MPI_Mrecv or
// MPI_Imrecv then receives exactly that message, named by the message
// handle (MPI_MESSAGE_NO_PROC, from a probe of MPI_PROC_NULL, is a message
// from no one: received at once, empty).
//
// In the trace a matched probe is the probe it is (an OpProbe, or an
// OpIprobe that answered yes, with the probe's envelope: its source may be
// AnySource) and the receive of its message is a blocking OpRecv placed
// right after it: posted and done when the probe returned, from the status's
// source and tag on the probe's communicator, with the Mrecv's buffer
// (type, count, bytes, site) and what it received (count, hash). So no call
// of the rank comes between the probe and the receive (no other receive can
// take the message), and the pair is the MPI_Probe idiom the replay knows
// (replay/probe.go): the race of an AnySource probe is the probe's, check
// enumerates its other senders and leaves what the program does with another
// message (it sized the buffer from the status) to a re-run with the probe
// pinned, which the shim counts as it counts an MPI_Probe. An Imrecv's
// request is complete when posted: its Wait and Test calls drop it, as they
// drop a request to MPI_PROC_NULL. An Improbe that found nothing is an
// OpIprobe that answered no (a poll); a probed message never received stays
// a found probe's.

// placeMatched finds the Mrecv/Imrecv of each matched probe of rd (the shim
// writes the probe's seq + 1 in the receive's Index) and makes it the
// receive of the probed message: rd.recvAt maps the probe's post index to
// the receive's, rd.placed the receive's to its done record (the Mrecv's,
// or, when it has none, one made from the probe's status).
func placeMatched(rd *rankData) {
	s := rd.seg
	for j, rj := range rd.posts {
		r := &s.recs[rj]
		if r.Call != callMrecv && r.Call != callImrecv || r.Index <= 0 || int(r.Index) > j {
			continue
		}
		i := int(r.Index) - 1
		p := &s.recs[rd.posts[i]]
		if p.Call != callMprobe && p.Call != callImprobe || p.Peer == trace.ProcNull || rd.doneOf[i] < 0 {
			continue
		}
		pd := &s.recs[rd.doneOf[i]]
		if !pd.Flag {
			continue
		}
		r.Peer, r.Tag, r.Comm = pd.Source, pd.StatTag, p.Comm
		d := &record{Type: recDone, Call: r.Call, Seq: uint32(j), Source: pd.Source, StatTag: pd.StatTag, SCount: pd.SCount}
		if k := rd.doneOf[j]; k >= 0 {
			rk := s.recs[k]
			d.SCount, d.Hash = rk.SCount, rk.Hash
		} else if r.Bytes > 0 { // not completed: the probed bytes in its elements
			d.SCount = pd.SCount * r.Count / r.Bytes
		}
		if rd.recvAt == nil {
			rd.recvAt, rd.placed = map[int]int{}, map[int]*record{}
		}
		rd.recvAt[i], rd.placed[j] = j, d
	}
}

// recvOrder is the order in which match takes rd's receives when it is not
// the posts' (nil): trace order, where the receive of a matched probe comes
// right after the probe.
func recvOrder(rd *rankData) []int {
	if rd.placed == nil {
		return nil
	}
	order := make([]int, len(rd.posts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rd.tseq[a], rd.tseq[b]) })
	return order
}
