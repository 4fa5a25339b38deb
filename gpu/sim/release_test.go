package sim_test

import (
	"github.com/p2ptrace/p2ptrace/verdict"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestReleaseReusesOnlyFinishedOps: a released op is reused by NewOp only
// once the engine is done with it. An eager send completes at post, but its
// envelope still waits in the receiver's unexpected queue: it must stay.
func TestReleaseReusesOnlyFinishedOps(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var s, w *sim.Op
	sendWaitRelease := func(e *sim.Engine, r int) bool {
		s = e.NewOp(r, trace.OpIsend)
		s.Peer, s.Bytes, s.Count, s.Dtype = 1, 8, 8, trace.Uint8
		e.NewRequest(s)
		e.PostSend(s)
		w = e.NewOp(r, trace.OpWait)
		w.SetReqs([]*sim.Op{s})
		if !e.Block(w, w.Reqs(), false) {
			t.Fatal("an eager send's Wait blocked")
		}
		e.Release(s)
		e.Release(w)
		e.Release(w) // twice: still reused once
		if a, b := e.NewOp(r, trace.OpCompute), e.NewOp(r, trace.OpCompute); a != w || b == s || b == w {
			t.Fatalf("NewOp reused %p and %p; want the finished Wait (%p) once and never the undelivered send (%p)", a, b, w, s)
		}
		return true
	}
	runScript(e, [][]call{{sendWaitRelease}, {compute(5000), recv(0, 0, 0)}})
	if e.Stuck() || len(e.Problems()) != 0 {
		t.Fatalf("%+v", e.Problems())
	}
	// Released before its transfer was over, the send is reused once it is:
	// once only, however often it is released.
	e.Release(s)
	if a, b := e.NewOp(0, trace.OpCompute), e.NewOp(0, trace.OpCompute); a != s || b == s {
		t.Fatalf("NewOp gave %p then %p; want the delivered send %p once", a, b, s)
	}
}

// TestReleaseNeverReusesOpsOfAProblem: a report refers to them.
func TestReleaseNeverReusesOpsOfAProblem(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var rv *sim.Op
	small := func(e *sim.Engine, r int) bool {
		rv = e.NewOp(r, trace.OpRecv)
		rv.Peer, rv.Bytes, rv.Count, rv.Dtype = 0, 4, 4, trace.Uint8
		e.PostRecv(rv)
		return e.BlockOn(rv)
	}
	runScript(e, [][]call{{send(1, 0)}, {small}})
	if ps := e.Problems(); len(ps) != 1 || ps[0].Kind != verdict.Truncation || ps[0].Ops[1] != rv {
		t.Fatalf("%+v", ps)
	}
	e.Release(rv)
	if e.NewOp(1, trace.OpCompute) == rv {
		t.Fatal("the truncated receive of a Problem was reused")
	}
}

// TestWaitAllCountsEachOpOnce: a wait-all naming one request twice resumes
// when it completes (the engine counts the ops it still needs).
func TestWaitAllCountsEachOpOnce(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var w *sim.Op
	waitTwice := func(e *sim.Engine, r int) bool {
		q := e.NewOp(r, trace.OpIrecv)
		q.Peer, q.Bytes, q.Count, q.Dtype = 0, 8, 8, trace.Uint8
		e.NewRequest(q)
		e.PostRecv(q)
		w = e.NewOp(r, trace.OpWaitall)
		w.SetReqs([]*sim.Op{q, q})
		return e.Block(w, w.Reqs(), false)
	}
	runScript(e, [][]call{{compute(5000), send(1, 0)}, {waitTwice}})
	if e.Stuck() || len(e.Problems()) != 0 || !w.Done() {
		t.Fatalf("stuck %v, wait done %v: %+v", e.Stuck(), w.Done(), e.Problems())
	}
}
