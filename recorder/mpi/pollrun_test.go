package mpi

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// pollRunC: rank 0 polls a pending receive 5,000 times in a tight loop
// with each of MPI_Test, MPI_Testany, MPI_Iprobe and MPI_Request_get_status
// before rank 1 can send (it waits for rank 0's go), then polls with
// MPI_Test until the message is there.
const pollRunC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, a = 0, go = 1, flag = 0, idx, i;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Irecv(&a, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req);
        for (i = 0; i < 5000; i++) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        for (i = 0; i < 5000; i++) MPI_Testany(1, &req, &idx, &flag, MPI_STATUS_IGNORE);
        for (i = 0; i < 5000; i++) MPI_Iprobe(1, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        for (i = 0; i < 5000; i++) MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
        flag = 0;
        while (!flag) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&a, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
`

// TestPollRunsThinned: of a run of fruitless polls that repeat the same
// call (poll_thinned), the shim records the 1st, 2nd, 4th, 8th...: a
// 5,000-poll run is 13 records, not 5,000 (a tight polling loop grew
// the segment by hundreds of MB a second), for each of MPI_Test,
// MPI_Testany, MPI_Iprobe and MPI_Request_get_status, and the poll that
// finds the message is recorded, with its completion.
func TestPollRunsThinned(t *testing.T) {
	out := mergedJob(t, "pollrun", pollRunC, 2)
	_, rk, _ := loadTrace(t, out)
	// The four runs, by the line of their call in order: 13 records each
	// (polls 1, 2, 4 ... 4096 of 5,000).
	runs := map[uint32]int{}
	var order []uint32
	var last op
	for _, o := range rk[0] {
		switch o.post.Op {
		case trace.OpTest, trace.OpTestall, trace.OpIprobe:
			if o.post.Op != trace.OpIprobe {
				last = o
			}
			if o.hasDone && o.done.Flag {
				continue
			}
			if runs[o.post.Site] == 0 {
				order = append(order, o.post.Site)
			}
			runs[o.post.Site]++
		}
	}
	if len(order) < 4 {
		t.Fatalf("fruitless polls by site %v, want the four loops' first", runs)
	}
	for i, site := range order[:4] {
		if runs[site] != 13 {
			t.Errorf("loop %d: %d fruitless polls recorded, want 13 (polls 1, 2, 4 ... 4096)", i+1, runs[site])
		}
	}
	if !last.hasDone || !last.done.Flag || len(last.post.Reqs) != 1 {
		t.Errorf("the last poll %+v: want the recorded Test that found the message", last.post)
	}
}
