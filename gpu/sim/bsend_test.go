package sim_test

import (
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// Calls of the scripts of the buffered-send tests (bsend.go); messages are
// 8 bytes, as those of send and recv.

func attach(bytes int64, got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, trace.OpBufferAttach)
		op.Bytes, op.Count = bytes, bytes
		e.BufferAttach(op)
		if got != nil {
			*got = op
		}
		return true
	}
}

func detach(got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, trace.OpBufferDetach)
		if got != nil {
			*got = op
		}
		return e.BufferDetach(op)
	}
}

func bsend(peer, tag int) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, trace.OpBsend)
		op.Peer, op.Tag, op.Bytes, op.Count, op.Dtype, op.Mode = int32(peer), int32(tag), 8, 8, trace.Uint8, sim.Buffered
		e.PostSend(op)
		return e.BlockOn(op)
	}
}

// bsendFindings runs script on an engine with overhead (0: the rule
// applies from a rank's first attach) and returns its BsendBuffer
// problems.
func bsendFindings(t *testing.T, overhead int64, script [][]call) (*sim.Engine, []sim.Problem) {
	t.Helper()
	e := sim.New(sim.Config{Ranks: len(script), BsendOverhead: overhead})
	runScript(e, script)
	var out []sim.Problem
	for _, p := range e.Problems() {
		if p.Kind == verdict.BsendBuffer {
			out = append(out, p)
		}
	}
	return e, out
}

// TestBsendFits: two messages of 8 bytes plus 100 of overhead in 216
// bytes attached, both in flight at once (the receiver receives late):
// clean.
func TestBsendFits(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2, BsendOverhead: 100})
	runClean(t, e, [][]call{
		{attach(216, nil), bsend(1, 0), bsend(1, 1)},
		{compute(1_000_000), recv(0, 0, 0), recv(0, 1, 0)},
	})
}

// TestBsendDoesNotFit: the same two messages in 215 bytes: the second is
// a finding naming the send and the attach, with bytes needed and free.
// With no buffer attached, the first already is.
func TestBsendDoesNotFit(t *testing.T) {
	var at *sim.Op
	e, ps := bsendFindings(t, 100, [][]call{
		{attach(215, &at), bsend(1, 0), bsend(1, 1)},
		{compute(1_000_000), recv(0, 0, 0), recv(0, 1, 0)},
	})
	if len(ps) != 1 || len(ps[0].Ops) != 2 || ps[0].Ops[0].Tag != 1 || ps[0].Ops[1] != at {
		t.Fatalf("problems %+v, want one naming the tag-1 Bsend and the attach", ps)
	}
	if m := ps[0].Message; !strings.Contains(m, "needs 108 bytes") || !strings.Contains(m, "107 of the 215 bytes") {
		t.Errorf("message %q: want 108 needed, 107 of 215 free", m)
	}
	if e.Stuck() {
		t.Error("stuck: the message that did not fit must still be sent")
	}
	_, ps = bsendFindings(t, 100, [][]call{{bsend(1, 0)}, {recv(0, 0, 0)}})
	if len(ps) != 1 || !strings.Contains(ps[0].Message, "no buffer attached") {
		t.Fatalf("problems %+v, want one: no buffer attached", ps)
	}
}

// TestBsendSpaceFreedAtTransmission: room for one message only; the second
// Bsend comes after the first was received: clean. Without an overhead
// configured, a rank that never attaches is not checked.
func TestBsendSpaceFreedAtTransmission(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2, BsendOverhead: 100})
	runClean(t, e, [][]call{
		{attach(108, nil), bsend(1, 0), compute(1_000_000), bsend(1, 1)},
		{recv(0, 0, 0), recv(0, 1, 0)},
	})
	e = sim.New(sim.Config{Ranks: 2})
	runClean(t, e, [][]call{{bsend(1, 0)}, {recv(0, 0, 0)}})
}

// TestBsendDetachBlocksUntilTransmitted: the detach returns once the
// receiver, late, took the message: not before its transfer.
func TestBsendDetachBlocksUntilTransmitted(t *testing.T) {
	var dt *sim.Op
	var rv *sim.Op
	e := sim.New(sim.Config{Ranks: 2, BsendOverhead: 100})
	runClean(t, e, [][]call{
		{attach(108, nil), bsend(1, 0), detach(&dt)},
		{compute(1_000_000), func(e *sim.Engine, r int) bool {
			rv = e.NewOp(r, trace.OpRecv)
			rv.Peer, rv.Bytes, rv.Count, rv.Dtype = 0, 8, 8, trace.Uint8
			e.PostRecv(rv)
			return e.BlockOn(rv)
		}},
	})
	if !dt.Done() || dt.DoneT < rv.DoneT || dt.DoneT < 1_000_000 {
		t.Fatalf("detach done %v at %d, receive done at %d: want after the transfer", dt.Done(), dt.DoneT, rv.DoneT)
	}
	if dt.Bytes != 108 {
		t.Errorf("detach hands back %d bytes, want 108", dt.Bytes)
	}
}

// TestBsendDetachHang: the receiver never receives: the detach never
// returns, a hang of rank 0 waiting on rank 1, its buffered message
// pending.
func TestBsendDetachHang(t *testing.T) {
	var dt *sim.Op
	e := sim.New(sim.Config{Ranks: 2, BsendOverhead: 100})
	runScript(e, [][]call{{attach(108, nil), bsend(1, 0), detach(&dt)}, {}})
	if !e.Stuck() || dt.Done() {
		t.Fatalf("stuck %v, detach done %v: want a detach that never returns", e.Stuck(), dt.Done())
	}
	var hang *sim.Problem
	for i, p := range e.Problems() {
		if p.Kind.Stuck() {
			hang = &e.Problems()[i]
		}
	}
	if hang == nil || len(hang.Blocked) != 1 || hang.Blocked[0].Call != dt {
		t.Fatalf("problems %+v: want a hang of the detach", e.Problems())
	}
	b := hang.Blocked[0]
	if len(b.WaitsOn) != 1 || b.WaitsOn[0] != 1 || len(b.Pending) != 1 || b.Pending[0].Kind != trace.OpBsend {
		t.Errorf("blocked %+v: want waiting on rank 1 for the Bsend", b)
	}
}

// TestBsendDoubleAttach: a second attach before the detach is an invalid
// call; the first buffer stays in effect. Attach, detach, attach is fine.
func TestBsendDoubleAttach(t *testing.T) {
	var first, second *sim.Op
	e := sim.New(sim.Config{Ranks: 1})
	runScript(e, [][]call{{attach(64, &first), attach(128, &second)}})
	ps := e.Problems()
	if len(ps) != 1 || ps[0].Kind != verdict.InvalidCall || ps[0].Ops[0] != second || ps[0].Ops[1] != first {
		t.Fatalf("problems %+v, want one invalid call naming both attaches", ps)
	}
	e = sim.New(sim.Config{Ranks: 1})
	runClean(t, e, [][]call{{attach(64, nil), detach(nil), attach(128, nil), detach(nil)}})
}

// TestBsendCancelledFreesSpace: an Ibsend nobody receives, cancelled,
// gives its space back: the next Bsend fits and the detach returns.
func TestBsendCancelledFreesSpace(t *testing.T) {
	var ib *sim.Op
	e := sim.New(sim.Config{Ranks: 2, BsendOverhead: 100})
	runClean(t, e, [][]call{
		{attach(108, nil), isendReq(trace.OpIbsend, sim.Buffered, 1, 99, &ib), cancelReq(&ib), waitReq(&ib), bsend(1, 0), detach(nil)},
		{recv(0, 0, 0)},
	})
}
