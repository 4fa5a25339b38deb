package sim_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestForcedAnySourceMatchesOnlyItsSource: a forced AnySource receive skips
// an earlier message of another rank (which stays for the next receive) and
// takes the forced sender's, while it still describes itself as AnySource.
func TestForcedAnySourceMatchesOnlyItsSource(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 3})
	var recvs []*sim.Op
	recv := func(forced bool) bool {
		op := e.NewOp(0, trace.OpRecv)
		op.Peer, op.Tag, op.Bytes = trace.AnySource, trace.AnyTag, 4
		if forced {
			op.Force(2)
		}
		recvs = append(recvs, op)
		e.PostRecv(op)
		return e.BlockOn(op)
	}
	send := func(r int) bool {
		op := e.NewOp(r, trace.OpSend)
		op.Peer, op.Tag, op.Bytes = 0, int32(r), 4
		e.PostSend(op)
		return e.BlockOn(op)
	}
	compute := func(r int, d int64) bool { return e.Compute(e.NewOp(r, trace.OpCompute), d) }
	finalize := func(r int) bool { e.Finalize(e.NewOp(r, trace.OpFinalize)); return false }
	// Rank 1's message arrives first; rank 0 posts its receives after both arrived.
	script := [3][]func() bool{
		{func() bool { return compute(0, 10_000) }, func() bool { return recv(true) }, func() bool { return recv(false) }, func() bool { return finalize(0) }},
		{func() bool { return send(1) }, func() bool { return finalize(1) }},
		{func() bool { return compute(2, 1000) }, func() bool { return send(2) }, func() bool { return finalize(2) }},
	}
	var pc [3]int
	for {
		r, ok := e.Next()
		if !ok {
			break
		}
		for pc[r] < len(script[r]) {
			pc[r]++
			if !script[r][pc[r]-1]() {
				break
			}
		}
	}
	if e.Stuck() || len(e.Problems()) != 0 {
		t.Fatalf("stuck %v, problems %+v", e.Stuck(), e.Problems())
	}
	if recvs[0].MatchRank != 2 || recvs[1].MatchRank != 1 {
		t.Fatalf("forced receive matched rank %d, the next one rank %d: want 2 then 1", recvs[0].MatchRank, recvs[1].MatchRank)
	}
	if got := sim.Describe(recvs[0]); got != "Recv from any rank any tag (4 bytes)" {
		t.Fatalf("forced receive described as %q", got)
	}
}
