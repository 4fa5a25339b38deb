package sim_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// sized is a message op of kind with count elements of 4 bytes, posted by
// post and waited for at once.
func sized(kind trace.Op, peer, count int, got **sim.Op) call {
	return func(e *sim.Engine, r int) bool {
		op := e.NewOp(r, kind)
		op.Peer, op.Count, op.Bytes, op.Dtype = int32(peer), int64(count), 4*int64(count), trace.Int32
		*got = op
		if kind.IsSend() {
			e.PostSend(op)
		} else {
			e.PostRecv(op)
		}
		return e.BlockOn(op)
	}
}

// TestNegativeCountInvalidCall: a negative count is an invalid call
// (MPI_ERR_COUNT) of the rank that passed it, named with its op, which
// fails at once: a send's, a receive's (MPI_PROC_NULL as the peer too: the
// count is checked first) and a collective's (its size negative), whose
// disagreement with the others' is that error, not a mismatch, and whose
// entry still lets the others' calls complete. The peer of
// a failed message op is not served: it hangs, as its own finding.
func TestNegativeCountInvalidCall(t *testing.T) {
	for _, c := range []struct {
		name   string
		script func(bad **sim.Op) [][]call
		stuck  bool
	}{
		{"send", func(bad **sim.Op) [][]call {
			var ok *sim.Op
			return [][]call{{sized(trace.OpSend, 1, -1, bad)}, {sized(trace.OpRecv, 0, 4, &ok)}}
		}, true},
		{"recv", func(bad **sim.Op) [][]call {
			return [][]call{{}, {sized(trace.OpRecv, 0, -2, bad)}}
		}, false},
		{"recv-proc-null", func(bad **sim.Op) [][]call {
			return [][]call{{}, {sized(trace.OpRecv, trace.ProcNull, -2, bad)}}
		}, false},
		{"bcast", func(bad **sim.Op) [][]call {
			return [][]call{{coll(trace.OpBcast, 2, 0, -8, 1, bad)}, {coll(trace.OpBcast, 2, 0, 8, 2, nil)}}
		}, false},
		// The failed call is the last entry the root waited for.
		{"reduce-last", func(bad **sim.Op) [][]call {
			return [][]call{{coll(trace.OpReduce, 2, 0, 8, 1, nil)}, {compute(1000), coll(trace.OpReduce, 2, 0, -8, 2, bad)}}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := sim.New(sim.Config{Ranks: 2})
			var bad *sim.Op
			runScript(e, c.script(&bad))
			ps := e.Problems()
			i := slices.IndexFunc(ps, func(p sim.Problem) bool { return p.Kind == verdict.InvalidCall })
			if i < 0 || !slices.Equal(ps[i].Ranks, []int{int(bad.Rank)}) || len(ps[i].Ops) != 1 || ps[i].Ops[0] != bad ||
				bad.Err != trace.ErrInvalid || !bad.Done() || !strings.Contains(ps[i].Message, "negative") {
				t.Fatalf("problems %+v; bad op %+v", ps, bad)
			}
			if e.Stuck() != c.stuck || len(ps) != 1+btoi(c.stuck) {
				t.Errorf("stuck %v, problems %+v", e.Stuck(), ps)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
