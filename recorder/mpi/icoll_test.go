package mpi

import (
	"path/filepath"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

const icollC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, a[3] = {0}, b[9], x = 1, y;
    MPI_Request r[3];
    MPI_Comm rev;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, 0, 3 - rank, &rev);
    MPI_Ibcast(a, 3, MPI_INT, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Ireduce(&x, &y, 1, MPI_INT, MPI_MAX, 0, rev, &r[1]);
    MPI_Ibarrier(MPI_COMM_WORLD, &r[2]);
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    MPI_Iallgather(a, 3, MPI_INT, b, 3, MPI_INT, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Comm_free(&rev);
    MPI_Finalize();
    return 0;
}
`

// TestMergeNonblockingCollectives: each nonblocking collective is its own
// op with its blocking form's fields (root as a world rank, comm rank,
// comm size, the caller's side, a reduction's op in Stream; an Ibarrier
// as a Barrier: no peer or tag) and the request it returned, which the
// Waitall and the Wait name.
func TestMergeNonblockingCollectives(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "icoll", icollC)
	segdir := runMPI(t, 3, bin, false)
	out := filepath.Join(dir, "icoll.p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rk, _ := loadTrace(t, out)
	for r := range 3 {
		if got := ops(rk[r]); got != "Ibcast Ireduce Ibarrier Waitall Iallgather Wait Finalize" {
			t.Fatalf("rank %d ops %q", r, got)
		}
		type want struct {
			peer, tag int32
			count     int64
			bytes     int64
			red       trace.ReduceOp
		}
		for i, w := range []want{{1, int32(r), 3, 12, trace.ReduceNone}, {2, int32(2 - r), 3, 4, trace.ReduceMax},
			{0, 0, 3, 0, trace.ReduceNone}} {
			p := rk[r][i].post
			if p.Peer != w.peer || p.Tag != w.tag || p.Count != w.count || p.Bytes != w.bytes || trace.ReduceOpOf(p.Op, p.Stream) != w.red || !rk[r][i].hasDone {
				t.Errorf("rank %d %s: peer %d tag %d count %d bytes %d op %d done %v; want %+v", r, p.Op, p.Peer, p.Tag, p.Count, p.Bytes, p.Stream, rk[r][i].hasDone, w)
			}
		}
		reqs := []uint64{rk[r][0].post.Req, rk[r][1].post.Req, rk[r][2].post.Req}
		if reqs[0] == 0 || reqs[1] == 0 || reqs[2] == 0 {
			t.Errorf("rank %d: requests %v", r, reqs)
		}
		for _, id := range reqs {
			found := false
			for _, q := range rk[r][3].post.Reqs {
				found = found || q == id
			}
			if !found {
				t.Errorf("rank %d: Waitall %v does not name request %d", r, rk[r][3].post.Reqs, id)
			}
		}
		if ig, w := rk[r][4].post, rk[r][5].post; ig.Req == 0 || len(w.Reqs) != 1 || w.Reqs[0] != ig.Req {
			t.Errorf("rank %d: Iallgather request %d, Wait names %v", r, ig.Req, w.Reqs)
		}
	}
}
