package sim_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestDescribeIn pins how an op reads in a report, in the default
// vocabulary and in torch.distributed's (a torch trace's findings name the
// function the program called, its ReduceOp, and src or dst).
func TestDescribeIn(t *testing.T) {
	torch := trace.TorchNames()
	allreduce := &sim.Op{Rank: 0, Kind: trace.OpAllreduce, Bytes: 16, Peer: -1}
	allreduce.SetStream(int32(trace.ReduceSum))
	bcast := &sim.Op{Rank: 1, Kind: trace.OpBcast, Peer: 0, Bytes: 16}
	reduce := &sim.Op{Rank: 1, Kind: trace.OpReduce, Peer: 1, Bytes: 8, Comm: 3}
	reduce.SetStream(int32(trace.ReduceMax))
	send := &sim.Op{Rank: 0, Kind: trace.OpSend, Peer: 1, Tag: 0, Bytes: 64}
	isend := &sim.Op{Rank: 0, Kind: trace.OpStreamSend, Peer: 1, Bytes: 64, Comm: sim.CommStreams}
	negative := &sim.Op{Rank: 0, Kind: trace.OpRecv, Peer: 1, Tag: 2, Count: -1, Bytes: -4}
	negColl := &sim.Op{Rank: 0, Kind: trace.OpBcast, Peer: 0, Count: -2, Bytes: -8}
	for _, tc := range []struct {
		names *trace.Names
		op    *sim.Op
		want  string
	}{
		{nil, allreduce, "Allreduce MPI_SUM (16 bytes)"},
		{torch, allreduce, "all_reduce ReduceOp.SUM (16 bytes)"},
		{nil, bcast, "Bcast root 0 (16 bytes)"},
		{torch, bcast, "broadcast src 0 (16 bytes)"},
		{torch, reduce, "reduce ReduceOp.MAX dst 1 on comm 3 (8 bytes)"},
		{nil, send, "Send to rank 1 tag 0 (64 bytes)"},
		{torch, send, "send to rank 1 tag 0 (64 bytes)"},
		{torch, isend, "send to rank 1 (64 bytes)"},
		// A negative count is named as passed, not as its bytes.
		{nil, negative, "Recv from rank 1 tag 2 (count -1)"},
		{nil, negColl, "Bcast root 0 (count -2)"},
	} {
		if got := sim.DescribeIn(tc.names, tc.op); got != tc.want {
			t.Errorf("DescribeIn(%s, %v) = %q, want %q", tc.names.API(), tc.op.Kind, got, tc.want)
		}
		if tc.names == nil {
			if got := sim.Describe(tc.op); got != tc.want {
				t.Errorf("Describe(%v) = %q, want %q", tc.op.Kind, got, tc.want)
			}
		}
		if r := sim.RefIn(tc.names, tc.op, nil); r.Call != tc.want || r.Op != tc.names.Op(tc.op.Kind) {
			t.Errorf("RefIn(%s, %v) = %+v", tc.names.API(), tc.op.Kind, r)
		}
	}
}
