package sim_test

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// A driver steps the engine: Next names the rank to run, the driver makes
// that rank's calls until one blocks. Here rank 0 sends a message to rank 1
// on each of three tags, and rank 1 receives them in the opposite order.
// rank 0 knows its next calls, so it forecasts each a call ahead
// (WillPost: a driver of a trace forecasts PostLead calls ahead, while
// WantsForecasts says it can help; forecasts change no result).
func ExampleEngine_WillPost() {
	e := sim.New(sim.Config{Ranks: 2})
	var ops [2][]*sim.Op
	started := [2]bool{}
	for {
		r, ok := e.Next()
		if !ok {
			break
		}
		if started[r] {
			e.Finalize(e.NewOp(r, trace.OpFinalize))
			continue
		}
		started[r] = true
		for i := range 3 {
			tag := i
			if r == 1 {
				tag = 2 - i
			}
			if r == 0 && i+1 < 3 {
				e.WillPost(0, trace.OpIsend, 1, i+1, 0) // the next call: an Isend to rank 1, tag i+1
			}
			kind := trace.OpIsend
			if r == 1 {
				kind = trace.OpIrecv
			}
			op := e.NewOp(r, kind)
			op.Peer, op.Tag, op.Dtype, op.Count, op.Bytes = int32(1-r), int32(tag), trace.Uint8, 8, 8
			e.NewRequest(op)
			if r == 0 {
				e.PostSend(op)
			} else {
				e.PostRecv(op)
			}
			ops[r] = append(ops[r], op)
		}
		if !e.Block(e.NewOp(r, trace.OpWaitall), ops[r], false) {
			continue
		}
		e.Finalize(e.NewOp(r, trace.OpFinalize))
	}
	for _, op := range ops[1] {
		fmt.Printf("rank 1 received tag %d: rank %d's op %d\n", op.StatusTag, op.MatchRank, op.MatchSeq)
	}
	fmt.Println("stuck:", e.Stuck())
	// Output:
	// rank 1 received tag 2: rank 0's op 2
	// rank 1 received tag 1: rank 0's op 1
	// rank 1 received tag 0: rank 0's op 0
	// stuck: false
}
