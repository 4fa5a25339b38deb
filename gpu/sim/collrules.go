package sim

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// collRule is how a member's collective call depends on the other
// members' calls: what an implementation may make it wait for by the
// data it needs (MPI-3.1 sec. 5.13, Correctness, lets any collective synchronize, the
// sync fault's rule; these are the least it must wait for).
type collRule uint8

const (
	// ruleAll: every member waits for every member (Barrier, Allreduce,
	// Allgather(v), Alltoall(v), Reduce_scatter(_block)).
	ruleAll collRule = iota
	// ruleFromRoot: a non-root waits for the root, the root for no one
	// (Bcast, Scatter(v)).
	ruleFromRoot
	// ruleToRoot: the root waits for every member, the others for no one
	// (Reduce, Gather(v)).
	ruleToRoot
	// rulePrefix: the member of rank i in the communicator waits for the
	// members of ranks below i (Scan, Exscan).
	rulePrefix
)

// ruleOf is the data-dependency rule of a collective op.
func ruleOf(k trace.Op) collRule {
	switch k {
	case trace.OpBcast, trace.OpScatter, trace.OpScatterv:
		return ruleFromRoot
	case trace.OpReduce, trace.OpGather, trace.OpGatherv:
		return ruleToRoot
	case trace.OpScan, trace.OpExscan:
		return rulePrefix
	}
	return ruleAll
}

// rooted reports whether a collective op has a root (Peer).
func rooted(k trace.Op) bool { r := ruleOf(k); return r == ruleFromRoot || r == ruleToRoot }

// sameSize reports whether the standard requires every member's call of
// a collective op to have the same type signature size (Bytes): those
// without per-rank counts (the v variants and Reduce_scatter have them).
func sameSize(k trace.Op) bool {
	switch k {
	case trace.OpBarrier, trace.OpGatherv, trace.OpScatterv, trace.OpAllgatherv, trace.OpAlltoallv, trace.OpReduceScatter:
		return false
	}
	return true
}

// collMismatch says how op, a member's k-th collective call on a
// communicator, disagrees with first, another member's k-th: "" when
// they match (the same kind, the same root, the same size where the
// standard requires it).
func collMismatch(first, op *Op) string {
	switch {
	case first.Kind != op.Kind:
		return "every member of a communicator must make the same collective calls in the same order"
	case rooted(op.Kind) && first.Peer != op.Peer:
		return fmt.Sprintf("the members name different roots (rank %d, rank %d)", first.Peer, op.Peer)
	case sameSize(op.Kind) && first.Bytes != op.Bytes:
		return fmt.Sprintf("their type signatures differ in size (%d and %d bytes)", first.Bytes, op.Bytes)
	}
	return ""
}
