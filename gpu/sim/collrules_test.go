package sim_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// coll is a collective call of kind on the world of n ranks with root
// (ignored by the rootless kinds) and bytes; the caller's rank in the
// world is its Tag, as the recorder writes it.
func coll(kind trace.Op, n, root int, bytes int64, site uintptr, got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, kind)
		op.Peer, op.Tag, op.Count, op.Bytes, op.Site = int32(root), int32(r), int64(n), bytes, site
		if got != nil {
			*got = op
		}
		return e.Collective(op)
	}
}

// TestCollectiveDependencyRules: ranks 0 and 1 enter at 0, rank 2 at
// 10 us (link latency 1 us); each call completes when the members its
// rule depends on entered, plus the latency (at its entry without any):
// a Bcast's non-root waits for the root, the root for no one; a Reduce's
// root for all, the others for no one; an Allreduce all for all; a Scan's
// rank i for ranks below i. Under sync every one waits for all.
func TestCollectiveDependencyRules(t *testing.T) {
	const late, lat = 10000, 1000
	for _, c := range []struct {
		kind trace.Op
		sync bool
		want [3]int64 // DoneT by rank
	}{
		{trace.OpBcast, false, [3]int64{0, lat, late + lat}},
		{trace.OpScatter, false, [3]int64{0, lat, late + lat}},
		{trace.OpReduce, false, [3]int64{late + lat, 0, late}},
		{trace.OpGather, false, [3]int64{late + lat, 0, late}},
		{trace.OpAllreduce, false, [3]int64{late + lat, late + lat, late + lat}},
		{trace.OpAlltoall, false, [3]int64{late + lat, late + lat, late + lat}},
		{trace.OpScan, false, [3]int64{0, lat, late + lat}},
		{trace.OpExscan, false, [3]int64{0, lat, late + lat}},
		{trace.OpBcast, true, [3]int64{late + lat, late + lat, late + lat}},
		{trace.OpReduce, true, [3]int64{late + lat, late + lat, late + lat}},
		{trace.OpScan, true, [3]int64{late + lat, late + lat, late + lat}},
	} {
		cfg := sim.Config{Ranks: 3, Latency: time.Microsecond}
		if c.sync {
			cfg.Faults = faults.Fixed(true, false, nil)
		}
		e := sim.New(cfg)
		var ops [3]*sim.Op
		runScript(e, [][]call{
			{coll(c.kind, 3, 0, 16, 1, &ops[0])},
			{coll(c.kind, 3, 0, 16, 1, &ops[1])},
			{compute(late), coll(c.kind, 3, 0, 16, 1, &ops[2])},
		})
		if e.Stuck() || len(e.Problems()) != 0 {
			t.Fatalf("%s sync=%v: stuck %v: %+v", c.kind, c.sync, e.Stuck(), e.Problems())
		}
		for r, op := range ops {
			if !op.Done() || op.DoneT != c.want[r] {
				t.Errorf("%s sync=%v: rank %d done %v at %d, want %d", c.kind, c.sync, r, op.Done(), op.DoneT, c.want[r])
			}
		}
	}
}

// TestCollectiveMismatch: the k-th collectives of a comm that differ in
// kind, root or (where the standard wants it equal) size are one
// collective-mismatch naming both calls in rank order, whichever rank
// entered first; the run goes on. The v variants' sizes may differ.
func TestCollectiveMismatch(t *testing.T) {
	for _, c := range []struct {
		name   string
		a, b   call // ranks 0 and 1
		first  int  // the rank that enters first
		want   string
		noneOK bool
	}{
		{"kind", coll(trace.OpReduce, 2, 0, 16, 1, nil), coll(trace.OpBcast, 2, 0, 16, 2, nil), 1,
			"rank 0 calls Reduce root 0 (16 bytes), rank 1 calls Bcast root 0 (16 bytes)", false},
		{"root", coll(trace.OpBcast, 2, 0, 16, 1, nil), coll(trace.OpBcast, 2, 1, 16, 2, nil), 0,
			"the members name different roots (rank 0, rank 1)", false},
		{"size", coll(trace.OpAllreduce, 2, -1, 16, 1, nil), coll(trace.OpAllreduce, 2, -1, 8, 2, nil), 0,
			"their type signatures differ in size (16 and 8 bytes)", false},
		{"gatherv sizes", coll(trace.OpGatherv, 2, 0, 16, 1, nil), coll(trace.OpGatherv, 2, 0, 8, 2, nil), 0, "", true},
		{"same", coll(trace.OpBcast, 2, 1, 16, 1, nil), coll(trace.OpBcast, 2, 1, 16, 2, nil), 1, "", true},
	} {
		e := sim.New(sim.Config{Ranks: 2})
		script := [][]call{{c.a}, {c.b}}
		script[1-c.first] = append([]call{compute(5000)}, script[1-c.first]...)
		runScript(e, script)
		ps := e.Problems()
		if e.Stuck() {
			t.Fatalf("%s: stuck: %+v", c.name, ps)
		}
		if c.noneOK {
			if len(ps) != 0 {
				t.Errorf("%s: %+v", c.name, ps)
			}
			continue
		}
		if len(ps) != 1 || ps[0].Kind != verdict.CollectiveMismatch || !slices.Equal(ps[0].Ranks, []int{0, 1}) ||
			ps[0].Ops[0].Rank != 0 || ps[0].Ops[1].Rank != 1 {
			t.Fatalf("%s: %+v", c.name, ps)
		}
		f := ps[0].Finding(sites)
		text := f.Text(1)
		for _, want := range []string{c.want, "collective call 1 on the world", "at site1", "at site2"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: report lacks %q:\n%s", c.name, want, text)
			}
		}
	}
}

// TestCollectiveOrderDeadlocksOnlyUnderSync is the program of MPI-3.1
// sec. 5.13's example (Correctness): rank 0 Bcasts (root 0) then sends to rank 1, which
// receives, then Bcasts. Without sync it completes (the root waits for no
// one); under sync the Bcast synchronizes: a deadlock whose wait-for edges
// go from the Bcast to rank 1 and from the Recv to rank 0, the Bcast
// marked as waiting only because of sync.
func TestCollectiveOrderDeadlocksOnlyUnderSync(t *testing.T) {
	for _, sync := range []bool{false, true} {
		cfg := sim.Config{Ranks: 2}
		if sync {
			cfg.Faults = faults.Fixed(true, false, nil)
		}
		e := sim.New(cfg)
		runScript(e, [][]call{
			{coll(trace.OpBcast, 2, 0, 16, 1, nil), send(1, 0)},
			{recv(0, 0, 2), coll(trace.OpBcast, 2, 0, 16, 3, nil)},
		})
		ps := e.Problems()
		if !sync {
			if e.Stuck() || len(ps) != 0 {
				t.Fatalf("without sync: %+v", ps)
			}
			continue
		}
		if len(ps) != 1 || ps[0].Kind != verdict.Deadlock || !slices.Equal(ps[0].Cycle, []int{0, 1, 0}) {
			t.Fatalf("sync: %+v", ps)
		}
		b := ps[0].Blocked
		if b[0].Call.Kind != trace.OpBcast || !slices.Equal(b[0].WaitsOn, []int{1}) || !b[0].SyncOnly ||
			!slices.Equal(b[1].WaitsOn, []int{0}) || b[1].SyncOnly {
			t.Fatalf("sync: %+v", b)
		}
	}
}

// TestStuckCollectiveWaitsOnItsDependencies: a Bcast's non-root whose root
// finished without the Bcast waits on the root alone; a Reduce's root on
// the member that never came; a Scan's rank 2 on rank 1, not on rank 3.
// (Each is a missing collective: the members that never came finished.)
func TestStuckCollectiveWaitsOnItsDependencies(t *testing.T) {
	for _, c := range []struct {
		kind    trace.Op
		script  [][]call
		waiting int
		want    []int
	}{
		{trace.OpBcast, [][]call{{}, {coll(trace.OpBcast, 3, 0, 8, 1, nil)}, {coll(trace.OpBcast, 3, 0, 8, 1, nil)}}, 1, []int{0}},
		{trace.OpReduce, [][]call{{coll(trace.OpReduce, 3, 0, 8, 1, nil)}, {coll(trace.OpReduce, 3, 0, 8, 1, nil)}, {}}, 0, []int{2}},
		{trace.OpScan, [][]call{{coll(trace.OpScan, 4, -1, 8, 1, nil)}, {}, {coll(trace.OpScan, 4, -1, 8, 1, nil)}, {}}, 2, []int{1}},
	} {
		e := sim.New(sim.Config{Ranks: len(c.script)})
		runScript(e, c.script)
		ps := e.Problems()
		if !e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.CollectiveMismatch {
			t.Fatalf("%s: %+v", c.kind, ps)
		}
		i := slices.IndexFunc(ps[0].Blocked, func(b sim.Blocked) bool { return b.Rank == c.waiting })
		if i < 0 || !slices.Equal(ps[0].Blocked[i].WaitsOn, c.want) {
			t.Errorf("%s: %+v, want rank %d waiting on %v", c.kind, ps[0].Blocked, c.waiting, c.want)
		}
	}
}

// TestCollectiveInvalidRoot: a root outside the world is an invalid call
// (the MPI library fails it), not also a mismatch with the others' root;
// the call fails at once and the others' Bcast completes.
func TestCollectiveInvalidRoot(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var bad *sim.Op
	runScript(e, [][]call{{coll(trace.OpBcast, 2, 7, 16, 1, &bad)}, {compute(100), coll(trace.OpBcast, 2, 0, 16, 2, nil)}})
	ps := e.Problems()
	if e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.InvalidCall || !slices.Equal(ps[0].Ranks, []int{0}) || bad.Err != trace.ErrInvalid {
		t.Fatalf("stuck %v: %+v", e.Stuck(), ps)
	}
}

// TestCollectiveInvalidRootLast: the invalid call is the last entry the
// others waited for (a Reduce's root waits for every member): its entry
// still completes them.
func TestCollectiveInvalidRootLast(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var bad *sim.Op
	runScript(e, [][]call{{coll(trace.OpReduce, 2, 0, 16, 1, nil)}, {compute(100), coll(trace.OpReduce, 2, 7, 16, 2, &bad)}})
	ps := e.Problems()
	if e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.InvalidCall || !slices.Equal(ps[0].Ranks, []int{1}) || bad.Err != trace.ErrInvalid {
		t.Fatalf("stuck %v: %+v", e.Stuck(), ps)
	}
}

// TestCollectiveKeepsNoCompletedCall: a call that completed before the
// others entered (a Bcast's root) may be released and its op reused; the
// collective still compares the later calls with it, and names it.
func TestCollectiveKeepsNoCompletedCall(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	var root *sim.Op
	release := func(e *sim.Engine, r int) bool {
		if !root.Done() {
			t.Fatal("the root's Bcast did not complete at once")
		}
		e.Release(root)
		c := e.NewOp(r, trace.OpCompute)
		if c != root {
			t.Error("the completed Bcast was not recycled: the collective still holds it")
		}
		return e.Compute(c, 100)
	}
	runScript(e, [][]call{
		{coll(trace.OpBcast, 2, 0, 16, 1, &root), release},
		{compute(5000), coll(trace.OpReduce, 2, 0, 16, 2, nil)},
	})
	ps := e.Problems()
	if len(ps) != 1 || ps[0].Kind != verdict.CollectiveMismatch {
		t.Fatalf("%+v", ps)
	}
	f := ps[0].Finding(sites)
	if text := f.Text(1); !strings.Contains(text, "rank 0 calls Bcast root 0 (16 bytes), rank 1 calls Reduce root 0 (16 bytes)") ||
		!strings.Contains(text, "rank 0 op 0: Bcast root 0 (16 bytes) at site1") {
		t.Errorf("%s", text)
	}
}

// TestCollectiveScanFollowsCommRanks: a Scan waits for the members below
// it in the communicator (Tag), not in the world: on a comm whose order is
// the world's reversed, world rank 2 (comm rank 0) waits for no one, and
// when it enters late the other two wait for it.
func TestCollectiveScanFollowsCommRanks(t *testing.T) {
	const late, lat = 10000, 1000
	scan := func(tag int, got **sim.Op) call {
		return func(e *sim.Engine, r int) bool {
			op := e.NewOp(r, trace.OpScan)
			op.Peer, op.Tag, op.Comm, op.Count, op.Bytes = -1, int32(tag), 5, 3, 4
			*got = op
			return e.Collective(op)
		}
	}
	e := sim.New(sim.Config{Ranks: 3, Latency: time.Microsecond})
	var ops [3]*sim.Op
	runScript(e, [][]call{{scan(2, &ops[0])}, {scan(1, &ops[1])}, {compute(late), scan(0, &ops[2])}})
	if e.Stuck() || len(e.Problems()) != 0 {
		t.Fatalf("%+v", e.Problems())
	}
	for r, want := range []int64{late + lat, late + lat, late} {
		if ops[r].DoneT != want {
			t.Errorf("rank %d done at %d, want %d", r, ops[r].DoneT, want)
		}
	}
}

// TestMissedCollective: a collective that members called and others
// finished without calling is a collective-mismatch (MPI-3.1 sec. 5.1),
// also when the run completes: a Reduce's non-root returns without its
// root, a Bcast's root without its non-roots. One finding per
// communicator, the lowest such call: a member that skipped one call
// shifts every later one.
func TestMissedCollective(t *testing.T) {
	reduce := func(site uintptr) call { return coll(trace.OpReduce, 3, 0, 8, site, nil) }
	bcast := func(site uintptr) call { return coll(trace.OpBcast, 3, 1, 8, site, nil) }
	for _, c := range []struct {
		name   string
		script [][]call
		stuck  bool
		ranks  []int
		call   uint64
		msg    string
	}{
		{"reduce without its root", [][]call{{}, {reduce(1)}, {reduce(2)}}, false, []int{0, 1, 2}, 1,
			"collective call 1 on the world: ranks 1, 2 called Reduce root 0 (8 bytes); rank 0 finished without calling it"},
		{"bcast root alone", [][]call{{}, {bcast(1)}, {}}, false, []int{0, 1, 2}, 1,
			"collective call 1 on the world: rank 1 called Bcast root 1 (8 bytes); ranks 0, 2 finished without calling it"},
		{"second reduce skipped", [][]call{{reduce(1), reduce(2)}, {reduce(3), reduce(4)}, {reduce(5)}}, true, []int{0, 1, 2}, 2,
			"collective call 2 on the world: ranks 0, 1 called Reduce root 0 (8 bytes); rank 2 finished without calling it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := sim.New(sim.Config{Ranks: len(c.script)})
			runScript(e, c.script)
			e.End()
			ps := e.Problems()
			if e.Stuck() != c.stuck || len(ps) != 1 || ps[0].Kind != verdict.CollectiveMismatch {
				t.Fatalf("stuck %v: %+v", e.Stuck(), ps)
			}
			p := ps[0]
			if !slices.Equal(p.Ranks, c.ranks) || p.Collective == nil || p.Collective.Call != c.call || !strings.HasPrefix(p.Message, c.msg) {
				t.Errorf("ranks %v, call %+v, message %q; want ranks %v, call %d, %q", p.Ranks, p.Collective, p.Message, c.ranks, c.call, c.msg)
			}
		})
	}
}

// TestMissedCollectiveNotAfterCut: a rank whose record was cut short may
// have been about to call the collective: no finding.
func TestMissedCollectiveNotAfterCut(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 2})
	cut := func(e *sim.Engine, r int) bool { e.Cut(r); return false }
	runScript(e, [][]call{{cut}, {coll(trace.OpReduce, 2, 0, 8, 1, nil)}})
	e.End()
	if ps := e.Problems(); len(ps) != 0 {
		t.Fatalf("%+v", ps)
	}
}

// TestMissedCollectiveOnKnownComm: on a communicator whose members the
// trace lists (Config.Comms), a member that never used it is named too.
func TestMissedCollectiveOnKnownComm(t *testing.T) {
	e := sim.New(sim.Config{Ranks: 4, Comms: []trace.CommGroup{{ID: 3, Ranks: []int{1, 2, 3}}}})
	onComm := func(site uintptr) call {
		return func(e *sim.Engine, r int) bool {
			op := e.NewOp(r, trace.OpBcast)
			op.Comm, op.Peer, op.Tag, op.Count, op.Bytes, op.Site = 3, 2, int32(r-1), 3, 8, site
			return e.Collective(op)
		}
	}
	runScript(e, [][]call{{}, {}, {onComm(1)}, {}})
	e.End()
	ps := e.Problems()
	if len(ps) != 1 || ps[0].Kind != verdict.CollectiveMismatch || !slices.Equal(ps[0].Ranks, []int{1, 2, 3}) ||
		!strings.Contains(ps[0].Message, "collective call 1 on comm 3: rank 2 called Bcast root 2 on comm 3 (8 bytes); ranks 1, 3 finished without calling it") {
		t.Fatalf("%+v", ps)
	}
}

// TestMissedCollectiveNotAfterADisagreement: once two members' k-th calls
// disagreed, their later calls no longer correspond: a member that
// finished is not also "missing" the next call, whether the run completes
// or the others wait in it (one finding, the first disagreement).
func TestMissedCollectiveNotAfterADisagreement(t *testing.T) {
	bar := func(site uintptr) call { return barrier(0, 0, site, nil) }
	e := sim.New(sim.Config{Ranks: 3})
	runScript(e, [][]call{{bar(1), bar(2)}, {bar(3), bar(4)}, {coll(trace.OpBcast, 3, 2, 8, 5, nil)}})
	e.End()
	var mismatches []uint64
	for _, p := range e.Problems() {
		if p.Kind == verdict.CollectiveMismatch {
			mismatches = append(mismatches, p.Collective.Call)
		}
	}
	if !slices.Equal(mismatches, []uint64{1}) {
		t.Fatalf("collective-mismatches of calls %v, want only call 1: %+v", mismatches, e.Problems())
	}
}
