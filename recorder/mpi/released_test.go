package mpi

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/verdict"
)

// releasedC releases memory the library still owns, six ways, and keeps
// three other buffers alive as it should. (Only sends and a window with no
// access are released: a receive into released memory would corrupt the
// test program itself.)
const releasedC = `#include <mpi.h>
#include <stdlib.h>
static MPI_Request post_send(int to) {
    int buf[4] = {1, 2, 3, 4};
    MPI_Request r;
    MPI_Isend(buf, 4, MPI_INT, to, 1, MPI_COMM_WORLD, &r); /* line 6: returns with it pending */
    return r;
}
static MPI_Win make_win(void) {
    int mem[4];
    MPI_Win w;
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w); /* line 12 */
    return w;
}
static void wait_here(MPI_Request *r) { MPI_Wait(r, MPI_STATUS_IGNORE); } /* line 15 */
static MPI_Request post_reduce(int *out) {
    int v[4] = {1, 1, 1, 1};
    MPI_Request r;
    MPI_Ireduce(v, out, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &r); /* line 19 */
    return r;
}
static MPI_Request make_persistent(int to) {
    int p[4] = {5, 6, 7, 8};
    MPI_Request r;
    MPI_Send_init(p, 4, MPI_INT, to, 5, MPI_COMM_WORLD, &r); /* returns an inactive request on its local */
    return r;
}
int main(int argc, char **argv) {
    int rank, x[4] = {0}, y[4] = {0}, mine[4];
    MPI_Request r;
    MPI_Win w;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        int *h = malloc(4 * sizeof(int));
        h[0] = h[1] = h[2] = h[3] = 7;
        MPI_Isend(h, 4, MPI_INT, 1, 2, MPI_COMM_WORLD, &r); /* line 37 */
        free(h); /* line 38: before the Wait */
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Recv(x, 4, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(x, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        r = post_send(0);
        MPI_Wait(&r, MPI_STATUS_IGNORE); /* line 44: main's frame is above post_send's */
    }
    w = make_win();
    MPI_Win_free(&w); /* line 47 */
    r = post_reduce(y);
    MPI_Wait(&r, MPI_STATUS_IGNORE); /* line 49 */
    if (rank == 0) {
        r = make_persistent(1);
        MPI_Start(&r); /* line 52: the buffer is dead already */
        MPI_Wait(&r, MPI_STATUS_IGNORE); /* line 53 */
        MPI_Request_free(&r);
    } else {
        MPI_Recv(y, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    /* Alive as they should be: main's own buffer waited in a deeper
       frame, a heap buffer freed after its Wait, a window over main's. */
    int *k = malloc(4 * sizeof(int));
    MPI_Irecv(y, 4, MPI_INT, 1 - rank, 3, MPI_COMM_WORLD, &r);
    MPI_Send(x, 4, MPI_INT, 1 - rank, 3, MPI_COMM_WORLD);
    wait_here(&r);
    MPI_Irecv(k, 4, MPI_INT, 1 - rank, 4, MPI_COMM_WORLD, &r);
    MPI_Send(x, 4, MPI_INT, 1 - rank, 4, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    free(k);
    MPI_Win_create(mine, sizeof mine, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    MPI_Win_free(&w);
    /* Released by the library's free() inside MPI_Free_mem, before
       MPI_Win_free (MPICH's MTestFreeWin): named by the program's call. */
    int *am;
    MPI_Alloc_mem(4 * sizeof(int), MPI_INFO_NULL, &am);
    MPI_Win_create(am, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w); /* line 74 */
    MPI_Free_mem(am); /* line 75: before MPI_Win_free */
    MPI_Win_free(&w);
    MPI_Finalize();
    return 0;
}
`

// TestMergeReportsReleasedBuffers: a pending send's buffer in the frame of
// a function that returned before the Wait, a pending send's heap block
// freed before the Wait, a nonblocking reduction's send buffer in a
// returned frame, a persistent send started after the function whose local
// it sends from returned, a window over a returned frame's local, and a
// window's memory of MPI_Alloc_mem released by MPI_Free_mem before
// MPI_Win_free (named by the program's call, not by the library's free)
// are released-buffer findings naming the post (or the window's making) and
// where it was released or seen (MPI-3.1 sec. 3.7.2: the buffer is the
// library's until the request completes); buffers kept alive are not.
func TestMergeReportsReleasedBuffers(t *testing.T) {
	out := mergedJob(t, "released", releasedC, 2)
	h, _, _ := loadTrace(t, out)
	var got []string
	for _, f := range h.Findings {
		if f.Kind != verdict.ReleasedBuffer {
			continue
		}
		var sites []string
		for _, o := range f.Ops {
			sites = append(sites, o.Call+"@"+filepath.Base(o.Site))
		}
		got = append(got, fmt.Sprintf("%v %s", f.Ranks, strings.Join(sites, " ")))
	}
	slices.Sort(got)
	want := []string{
		"[0] MPI_Ireduce@released.c:19 MPI_Wait@released.c:49",
		"[0] MPI_Isend@released.c:37 free@released.c:38",
		"[0] MPI_Start@released.c:52 MPI_Wait@released.c:53",
		"[0] MPI_Win_create@released.c:12 MPI_Win_free@released.c:47",
		"[1] MPI_Ireduce@released.c:19 MPI_Wait@released.c:49",
		"[1] MPI_Isend@released.c:6 MPI_Wait@released.c:44",
		"[1] MPI_Win_create@released.c:12 MPI_Win_free@released.c:47",
		"[0] MPI_Win_create@released.c:74 free@released.c:75",
		"[1] MPI_Win_create@released.c:74 free@released.c:75",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("released-buffer findings:\n%s\nwant:\n%s\nall findings: %v", strings.Join(got, "\n"), strings.Join(want, "\n"), h.Findings)
	}
	for _, f := range h.Findings {
		if f.Kind == verdict.ReleasedBuffer && f.Ranks[0] == 1 && strings.Contains(f.Message, "MPI_Isend") {
			if !strings.Contains(f.Message, "lay in a stack frame that returned before its request completed") {
				t.Errorf("message %q does not say the frame returned", f.Message)
			}
		}
	}
}
