package trace

import "strconv"

// ReduceOp is the reduction operation (MPI_Op) a reduction collective was
// called with: a predefined op as a stable code, a user-defined one as
// ReduceUser. Values are part of the file format: append only.
//
// It is carried in Event.Stream of the reduction collectives (OpReduce,
// OpAllreduce, OpReduceScatter, OpReduceScatterBlock, OpScan, OpExscan;
// see Op.IsReduction): Stream means a stream id only for the stream ops,
// and no collective had one, so the field was free there and every reader
// already carries it. 0 (ReduceNone) is "not recorded": traces written
// before the op was recorded read as such, and nothing is compared.
type ReduceOp uint8

// The reduction ops.
const (
	ReduceNone ReduceOp = iota // not recorded
	ReduceMax
	ReduceMin
	ReduceSum
	ReduceProd
	ReduceLand
	ReduceBand
	ReduceLor
	ReduceBor
	ReduceLxor
	ReduceBxor
	ReduceMaxloc
	ReduceMinloc
	ReduceReplace
	ReduceNoOp
	// ReduceUser is an op made by MPI_Op_create: its handle is the
	// process's own, so two ranks' user ops cannot be compared.
	ReduceUser
	reduceOpCount
)

var reduceOpNames = [...]string{
	ReduceNone: "none", ReduceMax: "MPI_MAX", ReduceMin: "MPI_MIN", ReduceSum: "MPI_SUM", ReduceProd: "MPI_PROD",
	ReduceLand: "MPI_LAND", ReduceBand: "MPI_BAND", ReduceLor: "MPI_LOR", ReduceBor: "MPI_BOR", ReduceLxor: "MPI_LXOR",
	ReduceBxor: "MPI_BXOR", ReduceMaxloc: "MPI_MAXLOC", ReduceMinloc: "MPI_MINLOC", ReduceReplace: "MPI_REPLACE",
	ReduceNoOp: "MPI_NO_OP", ReduceUser: "user-defined op",
}

// String names the op as MPI does ("MPI_SUM"); "user-defined op", "none".
func (o ReduceOp) String() string {
	if int(o) < len(reduceOpNames) {
		return reduceOpNames[o]
	}
	return "ReduceOp(" + strconv.Itoa(int(o)) + ")"
}

// Predefined reports whether o is one of MPI's predefined ops: the same
// op on every process, so two ranks' ops compare.
func (o ReduceOp) Predefined() bool { return o > ReduceNone && o < ReduceUser }

// IsReduction reports whether the op is a reduction collective, called
// with a reduction op (Event.Stream holds its ReduceOp).
func (o Op) IsReduction() bool {
	switch o.Blocking() {
	case OpReduce, OpAllreduce, OpReduceScatter, OpReduceScatterBlock, OpScan, OpExscan:
		return true
	}
	return false
}

// ReduceOpOf is the reduction op an event of a reduction collective
// records (ReduceNone for any other op, or an out-of-range value).
func ReduceOpOf(op Op, stream int32) ReduceOp {
	if !op.IsReduction() || stream <= 0 || stream >= int32(reduceOpCount) {
		return ReduceNone
	}
	return ReduceOp(stream)
}

// Basic reports whether d is a basic type p2ptrace knows (Uint8 ...
// Float64): two such types that differ are different type signatures,
// whatever their sizes. DtypeNone (not recorded) and Opaque (a derived
// type of mixed or unknown basic types) are not.
func (d Dtype) Basic() bool { return d >= Uint8 && d <= Float64 }
