package mpi

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// unstartedC: rank 0 makes three persistent sends to rank 1: tag 1,
// started and completed; tag 2, never started (its MPI_Wait returns at
// once); tag 3, a request of the same envelope and buffer as tag 1's but
// another tag, started in a loop's second pass only. Rank 1 receives tags
// 1 and 3: the job completes.
const unstartedC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, a = 1, b = 2, i;
    MPI_Request r1, r2, r3;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Send_init(&a, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r1);
        MPI_Send_init(&b, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &r2); /* NEVER */
        MPI_Send_init(&a, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &r3);
        MPI_Start(&r1);
        MPI_Wait(&r1, MPI_STATUS_IGNORE);
        MPI_Wait(&r2, MPI_STATUS_IGNORE);
        for (i = 0; i < 2; i++) {
            if (i == 1) {
                MPI_Startall(1, &r3);
                MPI_Wait(&r3, MPI_STATUS_IGNORE);
            }
        }
        MPI_Request_free(&r1);
        MPI_Request_free(&r2);
        MPI_Request_free(&r3);
    } else if (rank == 1) {
        MPI_Recv(&a, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&a, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
`

// TestMergeListsUnstartedRequests: the trace header lists the persistent
// requests made and never started (Header.Unstarted), with their init call
// and line, and none that an MPI_Start or MPI_Startall started.
func TestMergeListsUnstartedRequests(t *testing.T) {
	out := mergedJob(t, "unstarted", unstartedC, 2)
	h, _, _ := loadTrace(t, out)
	line := 0
	for i, l := range strings.Split(unstartedC, "\n") {
		if strings.Contains(l, "NEVER") {
			line = i + 1
		}
	}
	for i := range h.Unstarted {
		h.Unstarted[i].Site = filepath.Base(h.Unstarted[i].Site) // (the merge's paths are relative to its cwd)
	}
	want := []trace.Unstarted{{Rank: 0, Call: "MPI_Send_init", Op: trace.OpIsend, Peer: 1, Tag: 2, Site: "unstarted.c:" + strconv.Itoa(line)}}
	if diff := cmp.Diff(want, h.Unstarted); diff != "" {
		t.Errorf("Header.Unstarted (-want +got):\n%s", diff)
	}
}
