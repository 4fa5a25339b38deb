package mpi

import "github.com/p2ptrace/p2ptrace/recorder/trace"

// Matched probes (MPI 3.1 sec. 3.8.2). MPI_Mprobe, and MPI_Improbe when it
// sets flag, match a message as a receive would and take it off the
// matching queues: no other receive or probe can match it. MPI_Mrecv or
// MPI_Imrecv then receives exactly that message, named by the message
// handle. In the trace the two are one receive: a blocking OpRecv with the
// probe's envelope (its source may be AnySource), posted and matched at the
// probe, with the Mrecv's buffer (type, count, bytes) and what it received
// (count, hash). The match is made at the probe, and a trace receive that
// blocks cannot span the rank's calls between the probe and the Mrecv: so
// the receive completes at the probe's done; the Mrecv itself is no trace
// op, and an Imrecv's request is complete when posted (its Wait and Test
// calls drop it, as they drop a request to MPI_PROC_NULL). An Improbe that
// found nothing stays an OpIprobe that answered no (a poll).

// matchedReceives maps the post index of each matched probe to the post
// index of the Mrecv/Imrecv that received its message: the shim writes the
// probe's seq + 1 in the receive's Index (0: MPI_MESSAGE_NO_PROC).
func matchedReceives(s *segment, posts []int) map[int]int {
	var out map[int]int
	for j, ri := range posts {
		r := &s.recs[ri]
		if r.Call != callMrecv && r.Call != callImrecv || r.Index <= 0 || int(r.Index) > j {
			continue
		}
		i := int(r.Index) - 1
		if c := s.recs[posts[i]].Call; c != callMprobe && c != callImprobe {
			continue
		}
		if out == nil {
			out = map[int]int{}
		}
		out[i] = j
	}
	return out
}

// isMatchedProbe says whether post p (done d, nil while pending) matched a
// message: every MPI_Mprobe, an MPI_Improbe that set flag.
func isMatchedProbe(p, d *record) bool {
	return p.Peer != trace.ProcNull && (p.Call == callMprobe || p.Call == callImprobe && d != nil && d.Flag)
}

// foldMatched makes matched probe p (done d, nil while it waits) and the
// receive of its message (post rp and done rd, nil when there is none) one
// receive, in p and d. A message probed and never received keeps the probed
// size as bytes.
func foldMatched(p, d, rp, rd *record) {
	p.Op = uint8(trace.OpRecv)
	if rp != nil {
		p.Dtype, p.Count, p.Bytes, p.Sig, p.Addr, p.Span = rp.Dtype, rp.Count, rp.Bytes, rp.Sig, rp.Addr, rp.Span
	} else if d != nil {
		p.Dtype, p.Count, p.Bytes = uint8(trace.Uint8), d.SCount, d.SCount
	}
	if d == nil {
		return
	}
	d.Flag = false
	switch {
	case rd != nil:
		d.SCount, d.Hash = rd.SCount, rd.Hash
	case rp != nil && rp.Bytes > 0: // received, not completed: the probed size in its elements
		d.SCount = d.SCount * rp.Count / rp.Bytes
	default:
		// never received: the probed bytes, as the post's
	}
}
