package mpi

import (
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// TestReadyFindingsFollowSynchronization pins readyFindings: a ready send
// is reported unless the run's synchronization ordered its matching
// receive's post before it (MPI-3.1 sec. 3.4), whatever the timing: rank
// 1 posts its receive long before rank 0's MPI_Rsend, and with nothing
// between them the send is reported all the same; a barrier after the
// post and before the send orders them. A standard send is never judged.
func TestReadyFindingsFollowSynchronization(t *testing.T) {
	post := func(op trace.Op, call uint8, t0 uint64, pc uint64) record {
		return record{Type: recPost, Op: uint8(op), Call: call, Peer: 0, Tag: 7, Bytes: 64, T0: t0, PC: pc}
	}
	barrier := record{Type: recPost, Op: uint8(trace.OpBarrier), Call: callBarrier, Comm: 0, Count: 2}
	for _, tc := range []struct {
		name    string
		sendOp  trace.Op
		call    uint8
		barrier bool
		want    string // what the message names the send by ("": no finding)
	}{
		{"ready send, nothing between", trace.OpRsend, callRsend, false, "ready send (MPI_Rsend at r.c:34)"},
		{"ready send after a barrier that follows the post", trace.OpRsend, callRsend, true, ""},
		{"standard send, nothing between", trace.OpSend, callSend, false, ""},
		{"a started MPI_Rsend_init, nothing between", trace.OpIrsend, callStart, false,
			"ready send (a request of MPI_Rsend_init started by MPI_Start at r.c:34)"},
	} {
		call := tc.call
		send := post(tc.sendOp, call, 5000, 0x34)
		send.Peer = 1
		recv := post(trace.OpIrecv, callIrecv, 10, 0x36)
		wait := record{Type: recDone, Call: callWait, Seq: 0}
		var r0, r1 []record
		if tc.barrier {
			r0 = []record{barrier, send}
			r1 = []record{recv, barrier, wait}
		} else {
			r0, r1 = []record{send}, []record{recv, wait}
		}
		ranks := []*rankData{withPosts(0, r0), withPosts(0, r1)}
		si := len(r0) - 1 // the send's post index
		ranks[0].matchR[si], ranks[0].matchS[si] = 1, 0
		ranks[1].matchR[0], ranks[1].matchS[0] = 0, ranks[0].tseq[si]
		ranks[1].doneOf[0] = len(r1) - 1 // (the receive completes at its Wait)
		fs := readyFindings(ranks, pcSites("r.c"))
		if got := len(fs) == 1; got != (tc.want != "") || len(fs) > 1 {
			t.Errorf("%s: %d findings, want a finding %v: %v", tc.name, len(fs), tc.want != "", fs)
			continue
		}
		if tc.want == "" {
			continue
		}
		f := fs[0]
		if f.Kind != verdict.ReadyWithoutRecv || len(f.Ops) != 1 || f.Ops[0].Op != tc.sendOp.String() || f.Ops[0].Site != "r.c:34" ||
			!strings.HasPrefix(f.Message, "rank 0: "+tc.want+" to rank 1 tag 7, but no message or collective call ordered rank 1's matching receive (MPI_Irecv at r.c:36) before it") {
			t.Errorf("%s: finding %s ops %+v %q", tc.name, f.Kind, f.Ops, f.Message)
		}
	}
}
