package mpi

import (
	"path/filepath"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

const signatureC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, i, bl[2] = {1, 2}, dl[2] = {0, 4}, sbl[2] = {2, 3}, sizes[2] = {4, 4}, sub[2] = {2, 3}, st[2] = {1, 0};
    MPI_Aint sdl[2] = {0, 16};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT}, mixed[2] = {MPI_INT, MPI_DOUBLE}, t[10], in;
    char buf[4096], got[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (i = 0; i < 4096; i++) buf[i] = (char)i;
    MPI_Type_contiguous(3, MPI_INT, &t[1]);
    MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &t[2]);
    MPI_Type_indexed(2, bl, dl, MPI_FLOAT, &t[3]);
    MPI_Type_create_struct(2, sbl, sdl, types, &t[4]);
    MPI_Type_create_struct(2, bl, sdl, mixed, &t[5]);
    MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_LONG_LONG, &t[6]);
    MPI_Type_contiguous(2, MPI_CHAR, &in);
    MPI_Type_create_resized(in, 0, 8, &t[7]);
    MPI_Type_dup(MPI_INT, &t[8]);
    MPI_Type_contiguous(2, MPI_INT, &t[0]);
    MPI_Type_create_hvector(2, 1, 16, t[0], &t[9]);
    for (i = 0; i < 10; i++) MPI_Type_commit(&t[i]);
    if (rank == 0) {
        int counts[10] = {0, 2, 1, 1, 1, 1, 1, 2, 3, 1};
        for (i = 1; i < 10; i++) MPI_Send(buf, counts[i], t[i], 1, i, MPI_COMM_WORLD);
        MPI_Send(buf, 5, MPI_INT, 1, 10, MPI_COMM_WORLD);
    } else {
        for (i = 1; i < 10; i++) MPI_Recv(got, 4096, MPI_BYTE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(got, 4, t[0], 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    for (i = 0; i < 10; i++) MPI_Type_free(&t[i]);
    MPI_Type_free(&in);
    MPI_Finalize();
    return 0;
}
`

// TestMergeTypeSignatures: derived datatypes are recorded by type
// signature, flattened to one basic type and a count of it when the
// signature is one basic type repeated (through every combiner, nested),
// opaque when it mixes types; a receive's status count is in basic elements
// too, partial elements included.
func TestMergeTypeSignatures(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "signature", signatureC)
	segdir := runMPI(t, 2, bin, false)
	out := filepath.Join(dir, "signature.p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rk, _ := loadTrace(t, out)
	want := map[int32]struct {
		dtype trace.Dtype
		count int64
		bytes int64
	}{
		1: {trace.Int32, 6, 24},   // contiguous(3, INT) x 2
		2: {trace.Float64, 6, 48}, // vector(2, 3, 5, DOUBLE)
		3: {trace.Float32, 3, 12}, // indexed({1, 2}, FLOAT)
		4: {trace.Int32, 5, 20},   // struct {2 INT, 3 INT}
		5: {trace.Opaque, 1, 20},  // struct {1 INT, 2 DOUBLE}: mixed
		6: {trace.Int64, 6, 48},   // subarray 2x3 of 4x4 LONG_LONG
		7: {trace.Uint8, 4, 4},    // resized(contiguous(2, CHAR)) x 2
		8: {trace.Int32, 3, 12},   // dup(INT) x 3
		9: {trace.Int32, 4, 16},   // hvector(2, 1, contiguous(2, INT))
	}
	seen := 0
	for _, o := range rk[0] {
		w, ok := want[o.post.Tag]
		if !ok || o.post.Op != trace.OpSend {
			continue
		}
		seen++
		if o.post.Dtype != w.dtype || o.post.Count != w.count || o.post.Bytes != w.bytes {
			t.Errorf("tag %d: %s x %d (%d bytes), want %s x %d (%d bytes)", o.post.Tag, o.post.Dtype, o.post.Count, o.post.Bytes, w.dtype, w.count, w.bytes)
		}
	}
	if seen != len(want) {
		t.Errorf("%d sends checked, want %d", seen, len(want))
	}
	for _, o := range rk[1] {
		if o.post.Op == trace.OpRecv && o.post.Tag == 10 {
			if o.post.Dtype != trace.Int32 || o.post.Count != 8 || o.done.StatusCnt != 5 {
				t.Errorf("receive of contiguous(2, INT) x 4: %s x %d, status count %d; want int32 x 8, status count 5", o.post.Dtype, o.post.Count, o.done.StatusCnt)
			}
			return
		}
	}
	t.Error("no receive with tag 10")
}
