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
	switch k.Blocking() { // (a nonblocking collective waits as its blocking form)
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
	switch k.Blocking() {
	case trace.OpBarrier, trace.OpGatherv, trace.OpScatterv, trace.OpAllgatherv, trace.OpAlltoallv, trace.OpReduceScatter:
		return false
	}
	return true
}

// sameType reports whether the standard requires the recorded sides of
// every two members' calls of a collective op to have the same type
// signature, element type included, not only the same size: MPI-3.1 sec.
// 5.4 (Bcast): "The type signature of count, datatype on any process must
// be equal to the type signature of count, datatype at the root", and so
// on for each data-movement collective (5.5 Gather, 5.6 Scatter, 5.7
// Allgather, 5.8 Alltoall: the send side of each process against the
// receive side of the others, which are the sides recorded: see package
// recorder/mpi); sec. 5.9.1 (Reduce, and Allreduce, Reduce_scatter(_block),
// Scan, Exscan after it): "The routine is called by all group members using
// the same arguments for count, datatype, op, root and comm. Thus, all
// processes provide input buffers and output buffers of the same length,
// with elements of the same type". So: where sameSize compares sizes, and
// Reduce_scatter (per-rank counts, one datatype). Not the v variants of
// the data-movement collectives: their recorded side is the caller's own
// contribution, whose counts (zero among them, and zero elements have the
// empty signature whatever their type) the rule does not see.
func sameType(k trace.Op) bool {
	k = k.Blocking()
	return k != trace.OpBarrier && (sameSize(k) || k == trace.OpReduceScatter)
}

// typesDiffer reports whether the recorded datatypes of two calls are
// certainly different type signatures: both known basic types (a derived
// type whose signature is one basic type repeated is recorded as that type,
// as for a message), different, and both calls move data (count 0 has the
// empty signature whatever the type). The receive's rule (Engine.match)
// compares any two recorded types; here Opaque (a derived type of mixed or
// unknown basic types, or one the recorder could not flatten) is never
// compared: a collective's side is one whole argument, and an opaque one
// may well have the signature of n ints.
func typesDiffer(a, b *Op) bool {
	return a.Dtype.Basic() && b.Dtype.Basic() && a.Dtype != b.Dtype && a.Bytes > 0 && b.Bytes > 0
}

// reduceOp is the reduction op a collective call recorded (ReduceNone
// for a call that is not a reduction or recorded none).
func reduceOp(op *Op) trace.ReduceOp { return trace.ReduceOpOf(op.Kind, op.Stream()) }

// reduceOpsDiffer reports whether two reduction calls certainly pass
// different ops (MPI-3.1 sec. 5.9.1, above: "the same arguments for ...
// op"): both predefined and not the same. A user-defined op's handle
// belongs to its process (ranks may even pass different user functions:
// MPI leaves undefined which is applied where), so it is never compared;
// nor is an op not recorded (older traces).
func reduceOpsDiffer(a, b *Op) bool {
	x, y := reduceOp(a), reduceOp(b)
	return x.Predefined() && y.Predefined() && x != y
}

// collMismatch says how op, a member's k-th collective call on a
// communicator, disagrees with first, another member's k-th: "" when
// they match (the same kind, the same root, the same size and basic
// datatype where the standard requires it, the same predefined reduction
// op). With asyncMatches, a nonblocking call and the blocking call of the
// same collective are the same kind (Config.AsyncMatches).
func collMismatch(first, op *Op, asyncMatches bool) string {
	switch {
	case first.Kind != op.Kind && first.Kind.Blocking() == op.Kind.Blocking() && asyncMatches:
		a, b := *first, *op
		a.Kind, b.Kind = a.Kind.Blocking(), b.Kind.Blocking()
		return collMismatch(&a, &b, false)
	case first.Kind != op.Kind && first.Kind.Blocking() == op.Kind.Blocking():
		// MPI-3.1 sec. 5.12: "Unlike point-to-point operations,
		// nonblocking collective operations do not match with blocking
		// collective operations".
		return "a nonblocking collective does not match a blocking one (MPI-3.1 sec. 5.12)"
	case first.Kind != op.Kind:
		return "every member of a communicator must make the same collective calls in the same order"
	case rooted(op.Kind) && first.Peer != op.Peer:
		return fmt.Sprintf("the members name different roots (rank %d, rank %d)", first.Peer, op.Peer)
	case sameSize(op.Kind) && first.Bytes != op.Bytes:
		return fmt.Sprintf("their type signatures differ in size (%d and %d bytes)", first.Bytes, op.Bytes)
	case sameType(op.Kind) && typesDiffer(first, op):
		return fmt.Sprintf("their type signatures differ (%s and %s elements)", first.Dtype, op.Dtype)
	case op.Kind.IsReduction() && reduceOpsDiffer(first, op):
		return fmt.Sprintf("the members pass different reduction ops (%s, %s)", reduceOp(first), reduceOp(op))
	}
	return ""
}
