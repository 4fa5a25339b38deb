package mpi

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Two threads per rank exchange messages concurrently (MPI_THREAD_MULTIPLE),
// each on its own tag: the shim's lock keeps every rank's records whole.
const threadsC = `#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#define N 200
static int rank;
static void *worker(void *arg) {
    int tag = (int)(long)arg, i, v;
    MPI_Request r;
    for (i = 0; i < N; i++) {
        MPI_Irecv(&v, 1, MPI_INT, 1 - rank, tag, MPI_COMM_WORLD, &r);
        MPI_Send(&i, 1, MPI_INT, 1 - rank, tag, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (v != i) { fprintf(stderr, "thread %d got %d want %d\n", tag, v, i); MPI_Abort(MPI_COMM_WORLD, 1); }
    }
    return NULL;
}
int main(int argc, char **argv) {
    int provided;
    pthread_t t[2];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) { MPI_Finalize(); return 3; }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pthread_create(&t[0], NULL, worker, (void *)1L);
    pthread_create(&t[1], NULL, worker, (void *)2L);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    MPI_Finalize();
    return 0;
}
`

func TestThreadMultiple(t *testing.T) {
	dir := t.TempDir()
	shim(t)
	c := filepath.Join(dir, "threads.c")
	writeFile(t, c, threadsC)
	bin := filepath.Join(dir, "threads")
	if out, err := exec.Command("mpicc", "-g", "-O0", "-pthread", "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	segdir := runMPI(t, 2, bin, false)
	out := filepath.Join(dir, "threads.p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rk, _ := loadTrace(t, out)
	for r := range 2 {
		counts := map[trace.Op]int{}
		for _, o := range rk[r] {
			counts[o.post.Op]++
			if !o.hasDone {
				t.Errorf("rank %d: %s seq %d without done", r, o.post.Op, o.post.Seq)
			}
			if (o.post.Op == trace.OpSend || o.post.Op == trace.OpIrecv) && o.done.MatchRank != int32(1-r) {
				t.Errorf("rank %d: %s seq %d unmatched", r, o.post.Op, o.post.Seq)
			}
		}
		if counts[trace.OpIrecv] != 400 || counts[trace.OpSend] != 400 || counts[trace.OpWait] != 400 {
			t.Errorf("rank %d: op counts %v", r, counts)
		}
	}
}
