package mpi

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/verdict"
)

// loopOverlapC: every rank, ten times, makes two MPI_Fetch_and_op calls to
// rank 0 whose result buffers are one variable, without a flush between
// them: both pending write it (a buffer-overlap), at the same two lines
// each time.
const loopOverlapC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, i;
    long one = 1, old, *base;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    base[0] = base[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (i = 0; i < 10; i++) {
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 1, MPI_SUM, win);
        MPI_Fetch_and_op(NULL, &old, MPI_LONG, 0, 1, MPI_NO_OP, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
`

// TestMergeSaysALoopsFindingOnce: a rule's finding at the same calls in
// every pass of a loop is one finding per rank in the trace header (the
// same kind and ops: verdict.Dedup, as check counts them), not one a pass.
func TestMergeSaysALoopsFindingOnce(t *testing.T) {
	out := mergedJob(t, "loopoverlap", loopOverlapC, 2)
	h, _, _ := loadTrace(t, out)
	perRank := map[int]int{}
	for _, f := range h.Findings {
		if f.Kind == verdict.BufferOverlap && len(f.Ranks) == 1 {
			perRank[f.Ranks[0]]++
		}
	}
	if perRank[0] != 1 || perRank[1] != 1 {
		t.Errorf("buffer-overlap findings by rank %v, want one each:\n%v", perRank, h.Findings)
	}
}
