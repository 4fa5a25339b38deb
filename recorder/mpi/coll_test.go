package mpi

import (
	"path/filepath"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

const collC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, a[6] = {0}, b[6], c[6] = {0}, cnt[3] = {1, 1, 1}, dsp[3] = {0, 2, 4}, x = 1, y;
    MPI_Comm rev;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Bcast(a, 3, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Gather(a, 2, MPI_INT, b, 8, MPI_BYTE, 2, MPI_COMM_WORLD);
    MPI_Scatter(c, 1, MPI_DOUBLE, b, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, 0, 3 - rank, &rev);
    MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, rev);
    MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, rev);
    MPI_Comm_free(&rev);
    MPI_Finalize();
    return 0;
}
`

// TestMergeCollectives: each collective is its own op, with the root as a
// world rank (Peer; -1 without a root), the caller's rank in the
// communicator (Tag), the communicator's size (Count) and the caller's
// side of the type signature (Bytes, Dtype): a Gather root's receive
// side, the others' send side (8 bytes each, whatever the types); a
// Scatter root's send side; an Alltoallv's total receive. On a
// communicator in the reverse of the world's order, comm rank 0 is world
// rank 2, the root of its Reduce.
func TestMergeCollectives(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "coll", collC)
	segdir := runMPI(t, 3, bin, false)
	out := filepath.Join(dir, "coll.p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rk, _ := loadTrace(t, out)
	for r := range 3 {
		if got := ops(rk[r]); got != "Bcast Gather Scatter Alltoallv Scan Reduce Finalize" {
			t.Fatalf("rank %d ops %q", r, got)
		}
		type want struct {
			peer, tag int32
			count     int64
			bytes     int64
			dtype     trace.Dtype
		}
		gather, scatter := want{2, int32(r), 3, 8, trace.Int32}, want{0, int32(r), 3, 8, trace.Int32}
		if r == 2 {
			gather = want{2, 2, 3, 8, trace.Uint8}
		}
		if r == 0 {
			scatter = want{0, 0, 3, 8, trace.Float64}
		}
		for i, w := range []want{{1, int32(r), 3, 12, trace.Int32}, gather, scatter, {-1, int32(r), 3, 12, trace.Int32},
			{-1, int32(2 - r), 3, 4, trace.Int32}, {2, int32(2 - r), 3, 4, trace.Int32}} {
			p := rk[r][i].post
			if p.Peer != w.peer || p.Tag != w.tag || p.Count != w.count || p.Bytes != w.bytes || p.Dtype != w.dtype || !rk[r][i].hasDone {
				t.Errorf("rank %d %s: peer %d tag %d count %d bytes %d dtype %s done %v; want %+v", r, p.Op, p.Peer, p.Tag, p.Count, p.Bytes, p.Dtype, rk[r][i].hasDone, w)
			}
		}
		if rk[r][4].post.Comm == 0 || rk[r][4].post.Comm != rk[0][4].post.Comm {
			t.Errorf("rank %d: Scan on comm %d, rank 0's on %d", r, rk[r][4].post.Comm, rk[0][4].post.Comm)
		}
	}
}
