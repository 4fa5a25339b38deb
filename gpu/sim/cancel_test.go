package sim_test

import (
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// Calls of the scripts of the cancel tests; got receives each op made.

func irecvReq(peer, tag int, got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, trace.OpIrecv)
		op.Peer, op.Tag, op.Bytes, op.Count, op.Dtype = int32(peer), int32(tag), 8, 8, trace.Uint8
		e.NewRequest(op)
		e.PostRecv(op)
		*got = op
		return true
	}
}

func isendReq(kind trace.Op, mode sim.Mode, peer, tag int, got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, kind)
		op.Peer, op.Tag, op.Bytes, op.Count, op.Dtype, op.Mode = int32(peer), int32(tag), 8, 8, trace.Uint8, mode
		e.NewRequest(op)
		e.PostSend(op)
		*got = op
		return true
	}
}

func cancelReq(got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		e.Cancel(e.NewOp(r, trace.OpCancel), *got)
		return true
	}
}

func waitReq(got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		call := e.NewOp(r, trace.OpWait)
		call.SetReqs([]*sim.Op{*got})
		return e.Block(call, call.Reqs(), false)
	}
}

// delayAll delays every message by a millisecond: its envelope is on its
// way for that long.
type delayAll struct{}

func (delayAll) Sync() bool   { return false }
func (delayAll) Mutate() bool { return false }
func (delayAll) Message(faults.Message) faults.Action {
	return faults.Action{Delay: time.Millisecond}
}

// runClean runs script and fails unless it finished without problems.
func runClean(t *testing.T, e *sim.Engine, script [][]call) {
	t.Helper()
	runScript(e, script)
	if e.Stuck() || len(e.Problems()) != 0 {
		t.Fatalf("stuck %v, problems %+v", e.Stuck(), e.Problems())
	}
}

// TestCancelUnmatchedRecvCompletesCancelled: a receive nobody sends to,
// cancelled, completes at the cancel, cancelled, with no source; its Wait
// returns (the false deadlock of MPI_Cancel before it was modelled).
func TestCancelUnmatchedRecvCompletesCancelled(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var rv *sim.Op
	runClean(t, e, [][]call{
		{compute(500), irecvReq(1, 99, &rv), cancelReq(&rv), waitReq(&rv)},
		{},
	})
	if !rv.Done() || !rv.Cancelled() || rv.Source != trace.NoRank || rv.Matched() != nil || rv.DoneT != 500 {
		t.Fatalf("receive: done %v cancelled %v source %d matched %v at %d; want cancelled at 500 with no source",
			rv.Done(), rv.Cancelled(), rv.Source, rv.Matched(), rv.DoneT)
	}
}

// TestCancelMatchedRecvCompletesNormally: the cancel of a receive a send
// matched already does nothing: the data arrives.
func TestCancelMatchedRecvCompletesNormally(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var rv *sim.Op
	runClean(t, e, [][]call{
		{irecvReq(1, 5, &rv), compute(int64(time.Millisecond)), cancelReq(&rv), waitReq(&rv)},
		{send(0, 5)},
	})
	if rv.Cancelled() || rv.Source != 1 || rv.StatusTag != 5 || rv.StatusCnt != 8 {
		t.Fatalf("receive: cancelled %v, status %d/%d/%d; want received from rank 1 tag 5, 8 elements", rv.Cancelled(), rv.Source, rv.StatusTag, rv.StatusCnt)
	}
}

// TestCancelUnmatchedSendIsWithdrawn: a send whose message no receive took
// is withdrawn: on its way, waiting in the receiver's unexpected queue,
// eager (complete already) or synchronous (pending). It is never reported
// unmatched, and a receive posted later does not get it.
func TestCancelUnmatchedSendIsWithdrawn(t *testing.T) {
	for _, c := range []struct {
		name string
		kind trace.Op
		mode sim.Mode
		wait int64 // before the cancel: 0, the envelope is on its way (delayAll)
	}{
		{"eager-in-transit", trace.OpIsend, sim.Standard, 0},
		{"eager-unexpected", trace.OpIsend, sim.Standard, int64(2 * time.Millisecond)},
		{"sync-in-transit", trace.OpIssend, sim.Synchronous, 0},
		{"sync-unexpected", trace.OpIssend, sim.Synchronous, int64(2 * time.Millisecond)},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := sim.New(sim.Config{Ranks: 2, Faults: delayAll{}})
			var s, rv *sim.Op
			script := [][]call{
				{isendReq(c.kind, c.mode, 1, 3, &s), cancelReq(&s), waitReq(&s), barrier(0, 2, 0, nil)},
				{barrier(0, 2, 0, nil), irecvReq(0, 3, &rv)},
			}
			if c.wait > 0 {
				script[0] = append([]call{script[0][0], compute(c.wait)}, script[0][1:]...)
			}
			runScript(e, script)
			e.End()
			ps := e.Problems()
			if len(ps) != 1 || ps[0].Kind != verdict.MissingWait || ps[0].Ops[0] != rv {
				t.Fatalf("problems %+v; want only the receive rank 1 left active, no unmatched send", ps)
			}
			if !s.Cancelled() {
				t.Fatal("the send was not cancelled")
			}
			if rv.Done() {
				t.Fatalf("the receive posted after the cancel got the withdrawn message from %d", rv.Source)
			}
		})
	}
}

// TestCancelMatchedSendCompletesNormally: a send a posted receive took is
// not withdrawn.
func TestCancelMatchedSendCompletesNormally(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var s, rv *sim.Op
	runClean(t, e, [][]call{
		{barrier(0, 2, 0, nil), isendReq(trace.OpIsend, sim.Standard, 1, 3, &s), compute(int64(time.Millisecond)), cancelReq(&s), waitReq(&s)},
		{irecvReq(0, 3, &rv), barrier(0, 2, 0, nil), waitReq(&rv)},
	})
	if s.Cancelled() || rv.Source != 0 {
		t.Fatalf("send cancelled %v, receive from %d; want delivered from rank 0", s.Cancelled(), rv.Source)
	}
}

// TestCancelledAnySourceRecvIsNoRace: an AnySource receive cancelled before
// any message came matches nothing: the message sent later goes to the
// receive posted for it.
func TestCancelledAnySourceRecvIsNoRace(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 3})
	var any, rv1, rv2 *sim.Op
	runClean(t, e, [][]call{
		{irecvReq(trace.AnySource, 7, &any), cancelReq(&any), waitReq(&any), barrier(0, 3, 0, nil),
			irecvReq(1, 7, &rv1), waitReq(&rv1), irecvReq(2, 7, &rv2), waitReq(&rv2)},
		{barrier(0, 3, 0, nil), send(0, 7)},
		{barrier(0, 3, 0, nil), send(0, 7)},
	})
	if !any.Cancelled() || any.Matched() != nil || any.Source != trace.NoRank {
		t.Fatalf("AnySource receive: cancelled %v, matched %v, source %d", any.Cancelled(), any.Matched(), any.Source)
	}
	if rv1.Source != 1 || rv2.Source != 2 {
		t.Fatalf("receives got rank %d and %d, want 1 and 2", rv1.Source, rv2.Source)
	}
}

// TestCancelledRecvNeverWaitedIsMissingWait: a cancel does not complete the
// request for the program: left unwaited, it is a missing Wait.
func TestCancelledRecvNeverWaitedIsMissingWait(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var rv *sim.Op
	runScript(e, [][]call{{irecvReq(1, 99, &rv), cancelReq(&rv)}, {}})
	ps := e.Problems()
	if e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.MissingWait || ps[0].Ops[0] != rv {
		t.Fatalf("stuck %v, problems %+v; want one missing wait of the cancelled receive", e.Stuck(), ps)
	}
}
