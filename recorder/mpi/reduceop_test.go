package mpi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestShimReduceOpCodes: the shim's RED_ codes (what it writes in a
// reduction's index) are trace.ReduceOp's values, each of them. No MPI
// needed.
func TestShimReduceOpCodes(t *testing.T) {
	b, err := os.ReadFile("shim/p2ptrace_shim.c")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]trace.ReduceOp{}
	for o := trace.ReduceNone; o <= trace.ReduceUser; o++ {
		name := "RED_" + strings.ToUpper(strings.TrimPrefix(o.String(), "MPI_"))
		switch o {
		case trace.ReduceNone:
			name = "RED_NONE"
		case trace.ReduceUser:
			name = "RED_USER"
		}
		want[name] = o
	}
	got := 0
	for name, v := range cEnums(t, string(b)) {
		if !strings.HasPrefix(name, "RED_") {
			continue
		}
		got++
		if w, ok := want[name]; !ok {
			t.Errorf("%s = %d in the shim has no trace.ReduceOp", name, v)
		} else if int(w) != v {
			t.Errorf("%s = %d in the shim, trace.ReduceOp %d", name, v, w)
		}
	}
	if got != len(want) {
		t.Errorf("the shim has %d RED_ codes, trace.ReduceOp %d", got, len(want))
	}
}

const reduceOpC = `#include <mpi.h>
static void add(void *in, void *inout, int *len, MPI_Datatype *dt) {
    int i, *a = in, *b = inout;
    (void)dt;
    for (i = 0; i < *len; i++) b[i] += a[i];
}
int main(int argc, char **argv) {
    int rank, x[4] = {1, 2, 3, 4}, y[4];
    struct { int i; double d; } s = {0};
    int bl[2] = {1, 1};
    MPI_Aint dsp[2] = {0, 8};
    MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE}, four, mixed;
    MPI_Op user;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_contiguous(4, MPI_INT, &four);
    MPI_Type_commit(&four);
    MPI_Type_create_struct(2, bl, dsp, ts, &mixed);
    MPI_Type_commit(&mixed);
    MPI_Op_create(add, 1, &user);
    MPI_Allreduce(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(x, y, 4, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Scan(x, y, 4, MPI_INT, user, MPI_COMM_WORLD);
    MPI_Exscan(x, y, 2, MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(x, y, 2, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Bcast(x, 1, four, 0, MPI_COMM_WORLD);
    MPI_Bcast(&s, 1, mixed, 0, MPI_COMM_WORLD);
    MPI_Op_free(&user);
    MPI_Type_free(&four);
    MPI_Type_free(&mixed);
    MPI_Finalize();
    return 0;
}
`

// TestMergeReduceOps: a reduction's op reaches the trace in Stream as a
// trace.ReduceOp (MPI_SUM, MPI_MAX, a user-defined op as ReduceUser,
// MPI_BXOR, MPI_LAND); a collective's datatype is recorded as a
// message's: a contiguous type of 4 MPI_INT as int32 (its signature),
// a struct of an int and a double as opaque; a Bcast has no op.
func TestMergeReduceOps(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "redop", reduceOpC)
	segdir := runMPI(t, 2, bin, false)
	out := filepath.Join(dir, "redop.p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rk, _ := loadTrace(t, out)
	type want struct {
		red   trace.ReduceOp
		dtype trace.Dtype
		bytes int64
	}
	wants := []want{{trace.ReduceSum, trace.Int32, 16}, {trace.ReduceMax, trace.Int32, 16}, {trace.ReduceUser, trace.Int32, 16},
		{trace.ReduceBxor, trace.Int32, 8}, {trace.ReduceLand, trace.Int32, 8}, {trace.ReduceNone, trace.Int32, 16},
		{trace.ReduceNone, trace.Opaque, 12}}
	for r := range 2 {
		if got := ops(rk[r]); got != "Allreduce Reduce Scan Exscan Reduce_scatter_block Bcast Bcast Finalize" {
			t.Fatalf("rank %d ops %q", r, got)
		}
		for i, w := range wants {
			p := rk[r][i].post
			if got := trace.ReduceOpOf(p.Op, p.Stream); got != w.red || p.Dtype != w.dtype || p.Bytes != w.bytes {
				t.Errorf("rank %d %s: op %s (stream %d) dtype %s bytes %d; want %+v", r, p.Op, got, p.Stream, p.Dtype, p.Bytes, w)
			}
		}
	}
}
