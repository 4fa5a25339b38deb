package sim_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// typedColl is coll with the caller's datatype and, for a reduction, its
// op (carried in Stream as the trace does).
func typedColl(kind trace.Op, n, root int, bytes int64, dt trace.Dtype, red trace.ReduceOp, site uintptr) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, kind)
		op.Peer, op.Tag, op.Count, op.Bytes, op.Site = int32(root), int32(r), int64(n), bytes, site
		op.Dtype = dt
		op.SetStream(int32(red))
		return e.Collective(op)
	}
}

// collProblems runs ranks 0 and 1 calling a and b (rank 1 entering
// later) and returns the problems; the run must not be stuck.
func collProblems(t *testing.T, a, b call) []sim.Problem {
	t.Helper()
	e := sim.New(sim.Config{Ranks: 2})
	runScript(e, [][]call{{a}, {compute(5000), b}})
	if e.Stuck() {
		t.Fatalf("stuck: %+v", e.Problems())
	}
	return e.Problems()
}

// wantMismatch checks that ps is one collective-mismatch of ranks 0 and
// 1 whose report says each of want.
func wantMismatch(t *testing.T, name string, ps []sim.Problem, want ...string) {
	t.Helper()
	if len(ps) != 1 || ps[0].Kind != verdict.CollectiveMismatch || !slices.Equal(ps[0].Ranks, []int{0, 1}) {
		t.Fatalf("%s: want one collective-mismatch of ranks 0 and 1, got %+v", name, ps)
	}
	f := ps[0].Finding(sites)
	text := f.Text(1)
	for _, w := range append(want, "at site1", "at site2") {
		if !strings.Contains(text, w) {
			t.Errorf("%s: report lacks %q:\n%s", name, w, text)
		}
	}
}

// TestCollMismatchDatatype: members whose sides of a collective are the
// same size but different basic types (MPI_INT against MPI_FLOAT: 4 bytes
// each) have different type signatures (MPI-3.1 sec. 5.4 ff.; 5.9.1 for
// the reductions): a collective-mismatch, for every collective whose
// recorded sides must carry one signature, and Reduce_scatter (one
// datatype, per-rank counts: sizes may differ).
func TestCollMismatchDatatype(t *testing.T) {
	for _, k := range []trace.Op{trace.OpBcast, trace.OpReduce, trace.OpAllreduce, trace.OpGather, trace.OpScatter,
		trace.OpAllgather, trace.OpAlltoall, trace.OpReduceScatterBlock, trace.OpScan, trace.OpExscan} {
		ps := collProblems(t, typedColl(k, 2, 0, 16, trace.Int32, trace.ReduceSum, 1),
			typedColl(k, 2, 0, 16, trace.Float32, trace.ReduceSum, 2))
		wantMismatch(t, k.String(), ps, "their type signatures differ (int32 and float32 elements)")
	}
	ps := collProblems(t, typedColl(trace.OpReduceScatter, 2, -1, 16, trace.Float64, trace.ReduceSum, 1),
		typedColl(trace.OpReduceScatter, 2, -1, 8, trace.Int64, trace.ReduceSum, 2))
	wantMismatch(t, "Reduce_scatter", ps, "(float64 and int64 elements)")
}

// TestCollMismatchReduceOp: reductions whose members pass different
// predefined ops (MPI-3.1 sec. 5.9.1: "the same arguments for count,
// datatype, op, root and comm") are a collective-mismatch naming both ops,
// and the calls' descriptions name each rank's op.
func TestCollMismatchReduceOp(t *testing.T) {
	for _, k := range []trace.Op{trace.OpReduce, trace.OpAllreduce, trace.OpReduceScatter, trace.OpReduceScatterBlock,
		trace.OpScan, trace.OpExscan} {
		ps := collProblems(t, typedColl(k, 2, 0, 16, trace.Int32, trace.ReduceSum, 1),
			typedColl(k, 2, 0, 16, trace.Int32, trace.ReduceMax, 2))
		wantMismatch(t, k.String(), ps, "the members pass different reduction ops (MPI_SUM, MPI_MAX)",
			"rank 0 calls "+k.String()+" MPI_SUM", "rank 1 calls "+k.String()+" MPI_MAX")
	}
}

// TestCollMismatchNotFlagged: what the rules cannot call certainly wrong
// is not reported: the same basic type (whatever handle gave it: MPI_INT
// and a contiguous type of MPI_INT are both recorded int32), an opaque
// (derived, mixed) type against a basic one, a type not recorded (older
// traces), zero bytes (the empty signature), the v variants of the
// data-movement collectives (their recorded side is the caller's own
// contribution), user-defined ops (per-process handles), an op not
// recorded, and an op on a collective that is not a reduction.
func TestCollMismatchNotFlagged(t *testing.T) {
	const sum, max, user, none = trace.ReduceSum, trace.ReduceMax, trace.ReduceUser, trace.ReduceNone
	for _, c := range []struct {
		name string
		a, b call
	}{
		{"same basic type", typedColl(trace.OpBcast, 2, 0, 16, trace.Int32, none, 1), typedColl(trace.OpBcast, 2, 0, 16, trace.Int32, none, 2)},
		{"opaque", typedColl(trace.OpBcast, 2, 0, 16, trace.Opaque, none, 1), typedColl(trace.OpBcast, 2, 0, 16, trace.Int32, none, 2)},
		{"not recorded", typedColl(trace.OpAllreduce, 2, -1, 16, trace.DtypeNone, sum, 1), typedColl(trace.OpAllreduce, 2, -1, 16, trace.Float32, sum, 2)},
		{"zero bytes", typedColl(trace.OpBcast, 2, 0, 0, trace.Int32, none, 1), typedColl(trace.OpBcast, 2, 0, 0, trace.Float32, none, 2)},
		{"gatherv", typedColl(trace.OpGatherv, 2, 0, 16, trace.Int32, none, 1), typedColl(trace.OpGatherv, 2, 0, 8, trace.Float64, none, 2)},
		{"scatterv", typedColl(trace.OpScatterv, 2, 0, 16, trace.Int32, none, 1), typedColl(trace.OpScatterv, 2, 0, 16, trace.Float32, none, 2)},
		{"allgatherv", typedColl(trace.OpAllgatherv, 2, -1, 16, trace.Int32, none, 1), typedColl(trace.OpAllgatherv, 2, -1, 16, trace.Float32, none, 2)},
		{"alltoallv", typedColl(trace.OpAlltoallv, 2, -1, 16, trace.Int32, none, 1), typedColl(trace.OpAlltoallv, 2, -1, 16, trace.Float32, none, 2)},
		{"user ops", typedColl(trace.OpAllreduce, 2, -1, 16, trace.Int32, user, 1), typedColl(trace.OpAllreduce, 2, -1, 16, trace.Int32, user, 2)},
		{"user and predefined", typedColl(trace.OpReduce, 2, 0, 16, trace.Int32, user, 1), typedColl(trace.OpReduce, 2, 0, 16, trace.Int32, sum, 2)},
		{"op not recorded", typedColl(trace.OpScan, 2, -1, 16, trace.Int32, none, 1), typedColl(trace.OpScan, 2, -1, 16, trace.Int32, max, 2)},
		{"same op", typedColl(trace.OpExscan, 2, -1, 16, trace.Int32, max, 1), typedColl(trace.OpExscan, 2, -1, 16, trace.Int32, max, 2)},
		{"not a reduction", typedColl(trace.OpBcast, 2, 0, 16, trace.Int32, sum, 1), typedColl(trace.OpBcast, 2, 0, 16, trace.Int32, max, 2)},
	} {
		if ps := collProblems(t, c.a, c.b); len(ps) != 0 {
			t.Errorf("%s: %+v", c.name, ps)
		}
	}
}

// TestCollMismatchBehindTheFirst: the datatype and reduction-op rules
// compare each member with the first member that recorded a comparable
// one, not only with the first member: behind a first call with an opaque
// type or a user-defined op, two later members that differ from each
// other disagree (ranks 1 and 2 here, entering in rank order).
func TestCollMismatchBehindTheFirst(t *testing.T) {
	const sum, max, user, none = trace.ReduceSum, trace.ReduceMax, trace.ReduceUser, trace.ReduceNone
	for _, c := range []struct {
		name    string
		a, b, c call
		want    string
	}{
		{"datatype", typedColl(trace.OpBcast, 3, 0, 16, trace.Opaque, none, 1), typedColl(trace.OpBcast, 3, 0, 16, trace.Int32, none, 2),
			typedColl(trace.OpBcast, 3, 0, 16, trace.Float32, none, 3), "their type signatures differ (int32 and float32 elements)"},
		{"reduction op", typedColl(trace.OpAllreduce, 3, -1, 16, trace.Int32, user, 1), typedColl(trace.OpAllreduce, 3, -1, 16, trace.Int32, sum, 2),
			typedColl(trace.OpAllreduce, 3, -1, 16, trace.Int32, max, 3), "the members pass different reduction ops (MPI_SUM, MPI_MAX)"},
	} {
		e := sim.New(sim.Config{Ranks: 3})
		runScript(e, [][]call{{c.a}, {compute(5000), c.b}, {compute(10000), c.c}})
		ps := e.Problems()
		if e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.CollectiveMismatch || !slices.Equal(ps[0].Ranks, []int{1, 2}) {
			t.Fatalf("%s: want one collective-mismatch of ranks 1 and 2, got stuck %v %+v", c.name, e.Stuck(), ps)
		}
		f := ps[0].Finding(sites)
		if text := f.Text(1); !strings.Contains(text, c.want) || !strings.Contains(text, "at site2") || !strings.Contains(text, "at site3") {
			t.Errorf("%s: report lacks %q or the sites of ranks 1 and 2:\n%s", c.name, c.want, text)
		}
	}
	// The same three with the first two alike: nothing to report.
	e := sim.New(sim.Config{Ranks: 3})
	runScript(e, [][]call{{typedColl(trace.OpAllreduce, 3, -1, 16, trace.Opaque, user, 1)},
		{compute(5000), typedColl(trace.OpAllreduce, 3, -1, 16, trace.Int32, sum, 2)},
		{compute(10000), typedColl(trace.OpAllreduce, 3, -1, 16, trace.Int32, sum, 3)}})
	if ps := e.Problems(); len(ps) != 0 {
		t.Errorf("members 1 and 2 agree: %+v", ps)
	}
}

// TestCollSignatureOfAReleasedOp: the engine keeps its own copy of what
// it compares a collective's later members with (the reduction op rides
// out of line, in the op's opExt), so a first member whose op the driver
// released and reused for its next call, as the trace driver does, is
// still compared as it was called: two reductions that agree are no
// mismatch.
func TestCollSignatureOfAReleasedOp(t *testing.T) {
	// reduce is rank r's Reduce of 2 int64s to rank 1 by red. Rank 0's
	// first hands its op back, done, before the second: NewOp reuses it.
	var prev *sim.Op
	reduce := func(red trace.ReduceOp, site uintptr) call {
		return func(e *sim.Engine, r int) bool {
			if r == 0 && prev != nil {
				if !prev.Done() {
					t.Fatalf("rank 0's first Reduce not done when it calls the next")
				}
				e.Release(prev)
			}
			op := e.NewOp(r, trace.OpReduce)
			if r == 0 {
				if prev != nil && op != prev {
					t.Fatalf("rank 0's second Reduce is a new op, not its first reused")
				}
				prev = op
			}
			op.Peer, op.Count, op.Bytes, op.Dtype, op.Site = 1, 2, 16, trace.Int64, site
			op.SetStream(int32(red))
			return e.Collective(op)
		}
	}
	sum, max := reduce(trace.ReduceSum, 1), reduce(trace.ReduceMax, 2)
	e := sim.New(sim.Config{Ranks: 2})
	runScript(e, [][]call{{sum, max}, {compute(5000), sum, max}})
	if e.Stuck() || len(e.Problems()) != 0 {
		t.Fatalf("stuck %v, problems %+v; want a clean run", e.Stuck(), e.Problems())
	}
}
