package mpi

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// maxReadyOrder bounds the vector clocks readyFindings may keep (ranks
// times matched sends: syncOrder keeps one a send until its receive takes
// it): past it, the rule says nothing rather than take gigabytes.
const maxReadyOrder = 1 << 24

// readyFindings reports the ready sends (MPI_Rsend, MPI_Irsend, a started
// MPI_Rsend_init) whose matching receive no synchronization ordered before
// them: MPI-3.1 sec. 3.4, "a send that uses the ready communication mode
// may be started only if the matching receive is already posted", which a
// correct program guarantees by synchronization (the receiver posts, then
// tells the sender: a message, a collective call), not by timing. Whether
// this run's timing posted the receive first does not matter: a send the
// run's messages and collective calls do not order after its receive may
// come first in another run, and every door reports it alike (the replay
// as recorded saw the receive posted only when the timing did). One
// finding per send, named as the replay names it (its op and site), so the
// replay's finding of the same send is the same finding (verdict.Dedup).
func readyFindings(ranks []*rankData, siteText siteTextFunc) []verdict.Finding {
	type sendID struct {
		rank int
		seq  uint64
	}
	var ready []recRef // rank, post index
	sends := 0
	for r, rd := range ranks {
		if rd == nil {
			continue
		}
		for i, op := range rd.op {
			if rd.skip[i] || !op.IsSend() || rd.matchR[i] == trace.NoRank {
				continue
			}
			sends++
			if op == trace.OpRsend || op == trace.OpIrsend {
				ready = append(ready, recRef{r, i})
			}
		}
	}
	if len(ready) == 0 || sends*len(ranks) > maxReadyOrder {
		return nil
	}
	// The receive that took each ready send: the receive's done names the
	// send (MatchRank, MatchSeq).
	want := map[sendID]bool{}
	for _, s := range ready {
		want[sendID{s.rank, ranks[s.rank].tseq[s.rec]}] = true
	}
	recvOf := map[sendID]recRef{}
	for q, rd := range ranks {
		if rd == nil {
			continue
		}
		for j, op := range rd.op {
			if rd.skip[j] || !op.IsRecv() || rd.matchR[j] == trace.NoRank {
				continue
			}
			if k := (sendID{int(rd.matchR[j]), rd.matchS[j]}); want[k] {
				recvOf[k] = recRef{q, j}
			}
		}
	}
	asked := map[*record]bool{}
	for _, s := range ready {
		if rv, ok := recvOf[sendID{s.rank, ranks[s.rank].tseq[s.rec]}]; ok {
			asked[&ranks[s.rank].seg.recs[ranks[s.rank].posts[s.rec]]] = true
			asked[&ranks[rv.rank].seg.recs[ranks[rv.rank].posts[rv.rec]]] = true
		}
	}
	if len(asked) == 0 {
		return nil
	}
	order := newSyncOrder(ranks, func(r int, p *record) bool { return asked[p] })
	var fs []verdict.Finding
	for _, s := range ready {
		rv, ok := recvOf[sendID{s.rank, ranks[s.rank].tseq[s.rec]}]
		if !ok {
			continue
		}
		sd, rd := ranks[s.rank], ranks[rv.rank]
		send, recv := &sd.seg.recs[sd.posts[s.rec]], &rd.seg.recs[rd.posts[rv.rec]]
		if order.before(recRef{rv.rank, rd.posts[rv.rec]}, recRef{s.rank, sd.posts[s.rec]}) {
			continue
		}
		ss, rs := siteText(sd, send.Module, send.PC, send.Site), siteText(rd, recv.Module, recv.PC, recv.Site)
		op := sd.op[s.rec]
		call := callName(uint32(send.Call))
		if send.Call == callStart || send.Call == callStartall {
			call = "a request of MPI_Rsend_init started by " + call // (a persistent ready send)
		}
		ref := verdict.OpRef{Rank: s.rank, Seq: sd.tseq[s.rec], Op: op.String(), Peer: int(send.Peer), Tag: int(send.Tag), Site: ss,
			Call: fmt.Sprintf("%s to rank %d tag %d (%d bytes)", op, send.Peer, send.Tag, send.Bytes)}
		msg := fmt.Sprintf("rank %d: ready send (%s at %s) to rank %d tag %d, but no message or collective call ordered rank %d's matching receive (%s at %s) before it: "+
			"the receive may not be posted yet in another run (MPI-3.1 sec. 3.4: a ready send may be started only if the matching receive is already posted)",
			s.rank, call, siteOr(ss), send.Peer, send.Tag, rv.rank, callName(uint32(recv.Call)), siteOr(rs))
		f := verdict.New(verdict.ReadyWithoutRecv, []int{s.rank, rv.rank}, msg, ref)
		f.Hint = "post the receive, then let the sender know (a message or a barrier after the post) before its MPI_Rsend; or send in standard mode (MPI_Send)"
		fs = append(fs, f)
	}
	return fs
}
