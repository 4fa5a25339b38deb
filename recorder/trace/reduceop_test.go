package trace

import "testing"

// TestReduceOp: the ops are named as MPI names them; only the predefined
// ones compare; a reduction's Stream reads as its op, any other op's (a
// stream id) or an out-of-range value as ReduceNone.
func TestReduceOp(t *testing.T) {
	if ReduceSum.String() != "MPI_SUM" || ReduceNoOp.String() != "MPI_NO_OP" || ReduceUser.String() != "user-defined op" || ReduceOp(200).String() != "ReduceOp(200)" {
		t.Errorf("names: %s %s %s %s", ReduceSum, ReduceNoOp, ReduceUser, ReduceOp(200))
	}
	for o := ReduceNone; o <= ReduceUser; o++ {
		if o.Predefined() != (o != ReduceNone && o != ReduceUser) {
			t.Errorf("%s: Predefined %v", o, o.Predefined())
		}
	}
	for _, c := range []struct {
		op     Op
		stream int32
		want   ReduceOp
	}{
		{OpAllreduce, int32(ReduceMax), ReduceMax},
		{OpExscan, int32(ReduceUser), ReduceUser},
		{OpReduceScatter, 0, ReduceNone},
		{OpReduce, int32(reduceOpCount), ReduceNone},
		{OpReduce, -1, ReduceNone},
		{OpBcast, int32(ReduceSum), ReduceNone},
		{OpStreamSend, int32(ReduceSum), ReduceNone},
	} {
		if got := ReduceOpOf(c.op, c.stream); got != c.want {
			t.Errorf("ReduceOpOf(%s, %d) = %s, want %s", c.op, c.stream, got, c.want)
		}
	}
	for d := DtypeNone; d <= Opaque; d++ {
		if d.Basic() != (d != DtypeNone && d != Opaque) {
			t.Errorf("%s: Basic %v", d, d.Basic())
		}
	}
}
