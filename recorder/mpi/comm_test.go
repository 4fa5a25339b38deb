package mpi

import (
	"path/filepath"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// In each half (color rank%2) the ranks are reversed (key -rank), so comm
// ranks and world ranks differ: the highest world rank of the half sends to
// comm rank 1, the lowest world rank of the half.
const splitC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, srank, v = 0;
    MPI_Comm half, dup;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Comm_dup(half, &dup);
    MPI_Comm_rank(half, &srank);
    if (srank == 0) MPI_Send(&rank, 1, MPI_INT, 1, 3, half);
    else MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, half, MPI_STATUS_IGNORE);
    if (srank == 0) MPI_Send(&rank, 1, MPI_INT, 1, 4, dup);
    else MPI_Recv(&v, 1, MPI_INT, 0, 4, dup, MPI_STATUS_IGNORE);
    MPI_Barrier(half);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
`

func TestMergeCommSplit(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "split", splitC)
	segdir := runMPI(t, 4, bin, false)
	out := filepath.Join(dir, "split.p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rk, _ := loadTrace(t, out)
	comm := map[int]int32{} // world rank -> comm id of its half
	dupc := map[int]int32{}
	for r := range 4 {
		if got, want := ops(rk[r]), map[bool]string{true: "Send Send Barrier Finalize", false: "Recv Recv Barrier Finalize"}[r >= 2]; got != want {
			t.Fatalf("rank %d: ops %q, want %q", r, got, want)
		}
		comm[r], dupc[r] = rk[r][0].post.Comm, rk[r][1].post.Comm
		if b := rk[r][2].post; b.Op != trace.OpBarrier || b.Count != 2 || b.Comm != comm[r] {
			t.Errorf("rank %d: barrier %+v, want count 2 on comm %d", r, b, comm[r])
		}
	}
	for _, pair := range [][2]int{{0, 2}, {1, 3}} {
		lo, hi := pair[0], pair[1]
		if comm[lo] != comm[hi] || dupc[lo] != dupc[hi] || comm[lo] == 0 || dupc[lo] == 0 || comm[lo] == dupc[lo] {
			t.Errorf("ranks %d,%d: comm ids %d/%d, dup %d/%d: want equal, nonzero, distinct", lo, hi, comm[lo], comm[hi], dupc[lo], dupc[hi])
		}
		// world rank hi is comm rank 0 of its half and sends to comm rank 1 = world rank lo
		s, rv := rk[hi][0], rk[lo][0]
		if s.post.Peer != int32(lo) || s.post.Tag != 3 {
			t.Errorf("rank %d send: peer %d tag %d, want world rank %d tag 3", hi, s.post.Peer, s.post.Tag, lo)
		}
		if rv.post.Peer != trace.AnySource || rv.done.Source != int32(hi) || rv.done.MatchRank != int32(hi) || rv.done.MatchSeq != s.post.Seq {
			t.Errorf("rank %d recv: %+v / %+v, want source %d", lo, rv.post, rv.done, hi)
		}
		if d := rk[lo][1]; d.post.Peer != int32(hi) || d.done.Source != int32(hi) || d.done.MatchRank != int32(hi) {
			t.Errorf("rank %d recv on dup: %+v / %+v", lo, d.post, d.done)
		}
	}
	if comm[0] == comm[1] {
		t.Errorf("both halves have comm id %d", comm[0])
	}
}
