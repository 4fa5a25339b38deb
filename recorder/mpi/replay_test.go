package mpi

import (
	"path/filepath"
	"testing"

	"github.com/p2ptrace/p2ptrace/replay"
)

// A head-to-head exchange above the eager limit under `sync` hangs; as
// recorded (eager, 16 bytes) it completes. No Barrier/Probe: the replay
// driver as it is must take the merged trace without changes.
const headToHeadC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, out[4] = {1, 2, 3, 4}, in[4], any[4];
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Send(out, 4, MPI_INT, 1 - rank, 1, MPI_COMM_WORLD); /* SITE:h2h */
    MPI_Recv(in, 4, MPI_INT, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Irecv(any, 4, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &req);
    MPI_Send(out, 4, MPI_INT, 1 - rank, 2, MPI_COMM_WORLD);
    MPI_Sendrecv(out, 4, MPI_INT, 1 - rank, 3, in, 4, MPI_INT, 1 - rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
`

func TestMergedTraceReplays(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "h2h", headToHeadC)
	// The eager limit mpirun passes on (--mca btl_vader_eager_limit) is the trace's.
	segdir := runMPI(t, 2, bin, false, "OMPI_MCA_btl_vader_eager_limit=8192")
	out := filepath.Join(dir, "h2h.p2ptrace")
	res, err := Merge(segdir, out, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.EagerLimit != 8192-openMPIEagerHeader {
		t.Errorf("eager limit %d, want 8192 less Open MPI's headers", res.Header.EagerLimit)
	}
	tr, err := replay.OpenTrace(out)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	src, _ := tr.Open()
	o, err := replay.Replay(src, tr.Config())
	if err != nil {
		t.Fatal(err)
	}
	if o.Stuck || len(o.Problems) != 0 || len(o.Races) != 0 {
		t.Fatalf("replay as recorded: stuck %v problems %+v races %+v", o.Stuck, o.Problems, o.Races)
	}
	cfg := tr.Config()
	cfg.EagerLimit = -1 // no buffering: every send waits for its receive
	src, _ = tr.Open()
	o, err = replay.Replay(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Stuck {
		t.Fatalf("head-to-head sends without buffering: not stuck")
	}
}
