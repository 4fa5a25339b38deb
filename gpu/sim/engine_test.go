package sim_test

import (
	"github.com/p2ptrace/p2ptrace/verdict"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestEngineSteppedWithoutGoroutines drives the engine as the trace driver
// does: Next names a rank, the test makes that rank's next call. It also pins
// the link model: a rendezvous transfer costs latency + bytes/bandwidth.
func TestEngineSteppedWithoutGoroutines(t *testing.T) {
	const bytes = 1 << 20
	e := sim.New(sim.Config{Ranks: 2, EagerLimit: 1024, Latency: 10 * time.Microsecond, Bandwidth: 1e9})
	var send, recv *sim.Op
	step := [2]int{}
	for {
		r, ok := e.Next()
		if !ok {
			break
		}
		for cont := true; cont; step[r]++ {
			switch {
			case step[r] == 0 && r == 0:
				send = e.NewOp(0, trace.OpSend)
				send.Peer, send.Bytes, send.Dtype, send.Count = 1, bytes, trace.Uint8, bytes
				e.PostSend(send)
				cont = e.BlockOn(send)
			case step[r] == 0 && r == 1:
				recv = e.NewOp(1, trace.OpRecv)
				recv.Peer, recv.Bytes, recv.Dtype, recv.Count = 0, bytes, trace.Uint8, bytes
				e.PostRecv(recv)
				cont = e.BlockOn(recv)
			default:
				e.Finalize(e.NewOp(r, trace.OpFinalize))
				cont = false
			}
		}
	}
	if e.Stuck() || len(e.Problems()) != 0 {
		t.Fatalf("stuck %v, problems %+v", e.Stuck(), e.Problems())
	}
	want := int64(10*time.Microsecond) + int64(float64(bytes)/1e9*1e9)
	if !send.Done() || !recv.Done() || recv.DoneT != want || send.DoneT != want {
		t.Fatalf("send done at %d, recv at %d; want both at %d ns (latency + bytes/bandwidth)", send.DoneT, recv.DoneT, want)
	}
	if recv.MatchRank != 0 || recv.MatchSeq != 0 || recv.Source != 0 || recv.StatusCnt != bytes {
		t.Fatalf("recv status %+v", recv)
	}
}

// TestEngineReportsStuckWithoutGoroutines: two receives that nobody serves.
func TestEngineReportsStuckWithoutGoroutines(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	posted := [2]bool{}
	for {
		r, ok := e.Next()
		if !ok {
			break
		}
		if posted[r] {
			t.Fatalf("rank %d resumed though nothing can complete its receive", r)
		}
		posted[r] = true
		op := e.NewOp(r, trace.OpRecv)
		op.Peer, op.Tag = int32(1-r), 5
		e.PostRecv(op)
		if e.BlockOn(op) {
			t.Fatal("a receive with no sender completed")
		}
	}
	ps := e.Problems()
	if !e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.Deadlock || len(ps[0].Cycle) != 3 {
		t.Fatalf("%+v", ps)
	}
}
