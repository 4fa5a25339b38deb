package mpi

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// startActiveC starts rank 0's persistent send while it is active, as
// MODE says: start: a second MPI_Start before any Wait (Open MPI does not
// check it); startall-dup: the request twice in one MPI_Startall (nor
// that); return: a second MPI_Start under MPI_ERRORS_RETURN, which must
// fail without starting anything: rank 1 gets one message.
const startActiveC = `#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    int rank, v = 7, got = 0, flag = 0, rc;
    const char *mode = getenv("MODE");
    MPI_Request r, rs[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (strcmp(mode, "return") == 0) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) {
        MPI_Send_init(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
        if (strcmp(mode, "startall-dup") == 0) {
            rs[0] = rs[1] = r;
            MPI_Startall(2, rs); /* SITE:startall */
        } else {
            MPI_Start(&r);
            rc = MPI_Start(&r); /* SITE:start2 */
            if (rc == MPI_SUCCESS) { fprintf(stderr, "second MPI_Start succeeded\n"); return 1; }
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Request_free(&r);
    } else {
        MPI_Recv(&got, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Iprobe(0, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (flag) { fprintf(stderr, "a second message came\n"); return 1; }
    }
    MPI_Finalize();
    return 0;
}
`

// TestStartActiveIsInvalidCall: MPI_Start or MPI_Startall of a persistent
// request that is active (MPI-3.1 sec. 3.9: erroneous; Open MPI lets
// MPI_Start and a request named twice in MPI_Startall through) is failed
// by the shim with MPI_ERR_REQUEST before the library sees it: under the
// default MPI_ERRORS_ARE_FATAL a crashed trace whose invalid-call names
// the rank and the call's line; under MPI_ERRORS_RETURN the call returns
// the error and starts nothing.
func TestStartActiveIsInvalidCall(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "startactive", startActiveC)
	for _, c := range []struct{ mode, call, site string }{
		{"start", "MPI_Start", "SITE:start2"},
		{"startall-dup", "MPI_Startall", "SITE:startall"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			segdir := runMPI(t, 2, bin, true, "MODE="+c.mode)
			res, err := Merge(segdir, filepath.Join(dir, c.mode+".p2ptrace"), MergeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			line := itoa(siteLine(t, startActiveC, c.site))
			fs := res.Header.Findings
			if res.Header.Status != trace.StatusCrashed || len(fs) != 1 || fs[0].Kind != verdict.InvalidCall || !slices.Equal(fs[0].Ranks, []int{0}) ||
				!strings.HasPrefix(fs[0].Message, "rank 0: MPI error in "+c.call+": MPI_ERR_REQUEST") || !strings.Contains(fs[0].Message, "active") ||
				len(fs[0].Ops) != 1 || !strings.HasSuffix(fs[0].Ops[0].Site, "startactive.c:"+line) {
				t.Errorf("status %q findings %+v", res.Header.Status, fs)
			}
		})
	}
	t.Run("return", func(t *testing.T) {
		runMPI(t, 2, bin, false, "MODE=return")
	})
}
