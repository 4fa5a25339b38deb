package trace_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestNames pins the vocabularies: a torch.distributed trace's calls are
// named as the program called them (the function, its ReduceOp, src or
// dst for the root), any other trace's by the ops' own names.
func TestNames(t *testing.T) {
	torch := trace.NamesOf(&trace.Header{Backend: "torch.distributed gloo (torch 1.13.0a0)"})
	if torch == nil || torch.API() != "torch.distributed" {
		t.Fatalf("NamesOf(torch header) = %v", torch)
	}
	for _, h := range []trace.Header{{Backend: "sim"}, {Backend: "Open MPI v4.1.4"}} {
		if n := trace.NamesOf(&h); n != nil {
			t.Errorf("NamesOf(%q) = %v, want nil (the default)", h.Backend, n)
		}
	}
	var def *trace.Names
	for _, tc := range []struct {
		names *trace.Names
		op    trace.Op
		want  string
		root  string
	}{
		{def, trace.OpAllreduce, "Allreduce", "root"},
		{def, trace.OpBcast, "Bcast", "root"},
		{def, trace.OpStreamSend, "Stream.Send", "root"},
		{torch, trace.OpAllreduce, "all_reduce", "root"},
		{torch, trace.OpIallreduce, "all_reduce(async_op=True)", "root"},
		{torch, trace.OpBcast, "broadcast", "src"},
		{torch, trace.OpIbcast, "broadcast(async_op=True)", "src"},
		{torch, trace.OpScatter, "scatter", "src"},
		{torch, trace.OpReduce, "reduce", "dst"},
		{torch, trace.OpGather, "gather", "dst"},
		{torch, trace.OpAlltoall, "all_to_all_single", "root"},
		{torch, trace.OpAlltoallv, "all_to_all", "root"},
		{torch, trace.OpSend, "send", "root"},
		{torch, trace.OpIrecv, "irecv", "root"},
		{torch, trace.OpStreamSend, "send", "root"},
		{torch, trace.OpWait, "wait", "root"},
		{torch, trace.OpTest, "Work.is_completed", "root"},
		{torch, trace.OpBarrier, "barrier", "root"},
		{torch, trace.OpProbe, "Probe", "root"}, // none of torch's: the op's own
	} {
		if got := tc.names.Op(tc.op); got != tc.want {
			t.Errorf("%s.Op(%v) = %q, want %q", tc.names.API(), tc.op, got, tc.want)
		}
		if got := tc.names.Root(tc.op); got != tc.root {
			t.Errorf("%s.Root(%v) = %q, want %q", tc.names.API(), tc.op, got, tc.root)
		}
	}
	for _, tc := range []struct {
		names *trace.Names
		r     trace.ReduceOp
		want  string
	}{
		{def, trace.ReduceSum, "MPI_SUM"},
		{torch, trace.ReduceSum, "ReduceOp.SUM"},
		{torch, trace.ReduceProd, "ReduceOp.PRODUCT"},
		{torch, trace.ReduceUser, "a ReduceOp not compared (AVG, PREMUL_SUM)"},
		{torch, trace.ReduceLand, "MPI_LAND"}, // none of torch's
	} {
		if got := tc.names.Reduce(tc.r); got != tc.want {
			t.Errorf("%s.Reduce(%v) = %q, want %q", tc.names.API(), tc.r, got, tc.want)
		}
	}
}
