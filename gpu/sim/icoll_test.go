package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// icoll initiates a nonblocking collective of kind on the world of n
// ranks (fields as coll's) with a request; *got is its op.
func icoll(kind trace.Op, n, root int, bytes int64, site uintptr, got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, kind)
		op.Peer, op.Tag, op.Count, op.Bytes, op.Site = int32(root), int32(r), int64(n), bytes, site
		*got = op
		e.NewRequest(op)
		return e.Icollective(op)
	}
}

// waitAt is waitReq that also notes the Wait call.
func waitAt(req **sim.Op, got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		call := e.NewOp(r, trace.OpWait)
		call.SetReqs([]*sim.Op{*req})
		*got = call
		return e.Block(call, call.Reqs(), false)
	}
}

// TestIcollCompletesByDependency: ranks 0 and 1 initiate at 0, rank 2 at
// 10 us (latency 1 us); initiation never blocks (rank 0 computes 1 us
// right after it, its clock then 1 us), and each request completes, and
// its Wait returns, at its blocking form's time (TestCollectiveDependencyRules's
// numbers), never earlier; under sync every one waits for all, but the
// initiation still returns at once.
func TestIcollCompletesByDependency(t *testing.T) {
	const late, lat = 10000, 1000
	for _, c := range []struct {
		kind trace.Op
		sync bool
		want [3]int64 // DoneT by rank
	}{
		{trace.OpIbcast, false, [3]int64{0, lat, late + lat}},
		{trace.OpIreduce, false, [3]int64{late + lat, 0, late}},
		{trace.OpIallreduce, false, [3]int64{late + lat, late + lat, late + lat}},
		{trace.OpIbarrier, false, [3]int64{late + lat, late + lat, late + lat}},
		{trace.OpIscan, false, [3]int64{0, lat, late + lat}},
		{trace.OpIbcast, true, [3]int64{late + lat, late + lat, late + lat}},
	} {
		cfg := sim.Config{Ranks: 3, Latency: time.Microsecond}
		if c.sync {
			cfg.Faults = faults.Fixed(true, false, nil)
		}
		e := sim.New(cfg)
		var ops, waits [3]*sim.Op
		var after *sim.Op
		runScript(e, [][]call{
			{icoll(c.kind, 3, 0, 16, 1, &ops[0]), func(e *sim.Engine, r int) bool {
				after = e.NewOp(r, trace.OpCompute)
				return e.Compute(after, lat)
			}, waitAt(&ops[0], &waits[0])},
			{icoll(c.kind, 3, 0, 16, 1, &ops[1]), waitAt(&ops[1], &waits[1])},
			{compute(late), icoll(c.kind, 3, 0, 16, 1, &ops[2]), waitAt(&ops[2], &waits[2])},
		})
		if e.Stuck() || len(e.Problems()) != 0 {
			t.Fatalf("%s sync=%v: stuck %v: %+v", c.kind, c.sync, e.Stuck(), e.Problems())
		}
		if after.DoneT != lat {
			t.Errorf("%s sync=%v: rank 0's call after the initiation done at %d, want %d (initiation blocked)", c.kind, c.sync, after.DoneT, lat)
		}
		for r, op := range ops {
			if !op.Done() || op.DoneT != c.want[r] || !op.Waited() {
				t.Errorf("%s sync=%v: rank %d request done %v at %d waited %v, want %d", c.kind, c.sync, r, op.Done(), op.DoneT, op.Waited(), c.want[r])
			}
			if w := waits[r]; w.DoneT < c.want[r] {
				t.Errorf("%s sync=%v: rank %d Wait returned at %d, before its request completes (%d)", c.kind, c.sync, r, w.DoneT, c.want[r])
			}
		}
	}
}

// TestIcollOrderWithBlocking: nonblocking collectives take their place in
// the communicator's order of collectives as blocking ones do (MPI-3.1
// sec. 5.12). Ibcast then Barrier on every rank is clean, and the Barrier
// may complete before the Ibcast's request is waited; rank 0's Ibcast
// against rank 1's Barrier (and the reverse next) is a collective-mismatch,
// as is an Ibcast against a Bcast (a nonblocking collective never matches
// a blocking one).
func TestIcollOrderWithBlocking(t *testing.T) {
	var a, b, c, d *sim.Op
	e := sim.New(sim.Config{Ranks: 2, Latency: time.Microsecond})
	runScript(e, [][]call{
		{icoll(trace.OpIbcast, 2, 0, 8, 1, &a), barrier(0, 2, 2, nil), waitReq(&a)},
		{icoll(trace.OpIbcast, 2, 0, 8, 1, &b), barrier(0, 2, 2, nil), waitReq(&b)},
	})
	if e.Stuck() || len(e.Problems()) != 0 {
		t.Fatalf("same order: stuck %v: %+v", e.Stuck(), e.Problems())
	}

	e = sim.New(sim.Config{Ranks: 2, Latency: time.Microsecond})
	runScript(e, [][]call{
		{icoll(trace.OpIbcast, 2, 0, 8, 1, &a), barrier(0, 2, 2, nil), waitReq(&a)},
		{barrier(0, 2, 2, nil), icoll(trace.OpIbcast, 2, 0, 8, 1, &b), waitReq(&b)},
	})
	ps := e.Problems()
	if len(ps) == 0 || ps[0].Kind != verdict.CollectiveMismatch || !strings.Contains(ps[0].Message, "rank 0 calls Ibcast root 0 (8 bytes), rank 1 calls Barrier") {
		t.Fatalf("swapped order: want a collective-mismatch of Ibcast and Barrier first, got %+v", ps)
	}

	e = sim.New(sim.Config{Ranks: 2, Latency: time.Microsecond})
	runScript(e, [][]call{
		{icoll(trace.OpIbcast, 2, 0, 8, 1, &c), waitReq(&c)},
		{coll(trace.OpBcast, 2, 0, 8, 1, &d)},
	})
	ps = e.Problems()
	if len(ps) != 1 || ps[0].Kind != verdict.CollectiveMismatch || !strings.Contains(ps[0].Message, "does not match a blocking one") {
		t.Fatalf("Ibcast against Bcast: want one collective-mismatch, got %+v", ps)
	}
}

// TestIcollMatchesBlockingWithAsyncMatches: under Config.AsyncMatches (a
// torch.distributed trace, whose async_op=True call is the same
// collective) an Ibcast matches a Bcast and completes as one; a root that
// differs is still a mismatch, named as the blocking collective's.
func TestIcollMatchesBlockingWithAsyncMatches(t *testing.T) {
	var c, d *sim.Op
	e := sim.New(sim.Config{Ranks: 2, Latency: time.Microsecond, AsyncMatches: true})
	runScript(e, [][]call{
		{icoll(trace.OpIbcast, 2, 0, 8, 1, &c), waitReq(&c)},
		{coll(trace.OpBcast, 2, 0, 8, 1, &d)},
	})
	if e.Stuck() || len(e.Problems()) != 0 || !c.Done() || !d.Done() {
		t.Fatalf("Ibcast against Bcast: stuck %v, done %v %v: %+v", e.Stuck(), c.Done(), d.Done(), e.Problems())
	}
	e = sim.New(sim.Config{Ranks: 2, Latency: time.Microsecond, AsyncMatches: true})
	runScript(e, [][]call{
		{icoll(trace.OpIbcast, 2, 0, 8, 1, &c), waitReq(&c)},
		{coll(trace.OpBcast, 2, 1, 8, 1, &d)},
	})
	ps := e.Problems()
	if len(ps) != 1 || ps[0].Kind != verdict.CollectiveMismatch || !strings.Contains(ps[0].Message, "the members name different roots (rank 0, rank 1)") {
		t.Fatalf("roots differ: want one collective-mismatch, got %+v", ps)
	}
}

// TestIcollNeverWaited: an Iallreduce request never completed by a Wait
// or Test is a missing-wait at Finalize, as an Isend's is, on the rank
// that leaked it only; a rank blocked waiting for a member that never
// initiates its Iallreduce is stuck, waiting on that rank.
func TestIcollNeverWaited(t *testing.T) {
	var a, b *sim.Op
	e := sim.New(sim.Config{Ranks: 2, Latency: time.Microsecond})
	runScript(e, [][]call{
		{icoll(trace.OpIallreduce, 2, -1, 8, 1, &a)},
		{icoll(trace.OpIallreduce, 2, -1, 8, 1, &b), waitReq(&b)},
	})
	ps := e.Problems()
	if e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.MissingWait || ps[0].Ranks[0] != 0 || ps[0].Ops[0] != a {
		t.Fatalf("want one missing-wait of rank 0's Iallreduce, got stuck %v %+v", e.Stuck(), ps)
	}
	// The request is named as the collective it is: no peer, no tag.
	if want := "rank 0: request of Iallreduce (8 bytes) never completed before the rank finished"; ps[0].Message != want {
		t.Errorf("message %q, want %q", ps[0].Message, want)
	}

	e = sim.New(sim.Config{Ranks: 2, Latency: time.Microsecond})
	runScript(e, [][]call{
		{icoll(trace.OpIallreduce, 2, -1, 8, 1, &a), waitReq(&a)},
		{},
	})
	ps = e.Problems()
	if !e.Stuck() || len(ps) != 1 || len(ps[0].Blocked) != 1 || ps[0].Blocked[0].Rank != 0 ||
		len(ps[0].Blocked[0].WaitsOn) != 1 || ps[0].Blocked[0].WaitsOn[0] != 1 {
		t.Fatalf("want rank 0 stuck in its Wait on rank 1, got stuck %v %+v", e.Stuck(), ps)
	}
}
