package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/internal/proc"
	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/recorder/mpi"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

const spinAfterSend = `#include <mpi.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, x = 0;
	volatile long spin = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD); /* LAST */
		for (;;) spin++;
	}
	MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
`

// TestRecordMPITimeoutEndsSpinningRank: rank 0 spins in its own code after
// an MPI_Send (so the job never looks hung: rank 0 is not in MPI); with
// Timeout the job is ended, no process is left, and the trace is marked
// with a no-progress finding naming rank 0 and the Send's line. (A timeout
// of 4 s: with 2 s, a loaded machine's startup left rank 1 between its
// Recv and its Barrier at the deadline, running code of its own then.)
func TestRecordMPITimeoutEndsSpinningRank(t *testing.T) {
	mpitest.RequireMPI(t)
	t.Parallel()
	dir := t.TempDir()
	exe, source := mpiProgram(t, dir, "spin", spinAfterSend)
	var log bytes.Buffer
	start := time.Now()
	segs := filepath.Join(dir, "segments")
	sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{
		Program: exe, Ranks: 2, Output: filepath.Join(dir, "spin.db"), Segments: segs, Timeout: 4 * time.Second,
		Stdout: io.Discard, Stderr: &log, Log: &log,
	})
	if err != nil {
		t.Fatalf("RecordMPI: %v\n%s", err, log.String())
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v; want about the timeout (4s) plus startup", d)
	}
	if sum.Header.Status != trace.StatusHung || sum.Clean() {
		t.Fatalf("status %q, clean %v; want hung", sum.Header.Status, sum.Clean())
	}
	line := fmt.Sprintf("%s:%d", filepath.Base(source), lineOf(t, spinAfterSend, "LAST"))
	for _, want := range []string{"[1] no-progress (cause: program)\n    the job did not end within --timeout 4s; p2ptrace record ended it", "rank 0 runs code of its own (its last MPI call was Send at ", line} {
		if !strings.Contains(sum.Text(), want) {
			t.Errorf("message lacks %q:\n%s", want, sum.Text())
		}
	}
	if strings.Contains(sum.Text(), "rank 1 runs") {
		t.Errorf("rank 1 (blocked in MPI) named as running:\n%s", sum.Text())
	}
	for r := range 2 {
		st, err := mpi.ReadLiveState(mpi.SegmentPath(segs, r))
		if err != nil {
			t.Fatal(err)
		}
		if st.PID <= 0 || proc.Running(st.PID) {
			t.Errorf("rank %d (pid %d) still runs after the job was ended", r, st.PID)
		}
	}
}

const iprobeLivelock = `#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <time.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, x = 0, flag = 0;
	struct timespec ms = {0, 1000000};
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 1) {
		MPI_Send(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
	} else {
		while (!flag) {
			nanosleep(&ms, NULL);
			MPI_Iprobe(1, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); /* POLL */
		}
		MPI_Recv(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Finalize();
	return 0;
}
`

// TestRecordMPIIprobeLivelockIsHang: rank 0 polls MPI_Iprobe for a tag rank
// 1 never sends. The monitor counts a rank that only polls without success
// as blocked, so the job ends as hung within the hang timeout, and the
// replay's analysis names the Iprobe's envelope and line.
func TestRecordMPIIprobeLivelockIsHang(t *testing.T) {
	mpitest.RequireMPI(t)
	t.Parallel()
	dir := t.TempDir()
	exe, source := mpiProgram(t, dir, "iprobe", iprobeLivelock)
	var log bytes.Buffer
	start := time.Now()
	sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{
		Program: exe, Ranks: 2, Output: filepath.Join(dir, "iprobe.db"), HangTimeout: time.Second,
		Stdout: io.Discard, Stderr: &log, Log: &log,
	})
	if err != nil {
		t.Fatalf("RecordMPI: %v\n%s", err, log.String())
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v; want about the hang timeout (1s) plus startup", d)
	}
	if sum.Header.Status != trace.StatusHung {
		t.Fatalf("status %q, want hung:\n%s", sum.Header.Status, sum.Text())
	}
	line := fmt.Sprintf("%s:%d", filepath.Base(source), lineOf(t, iprobeLivelock, "POLL"))
	for _, want := range []string{"polling without success", "hang (cause: program)\n    no rank can progress; rank 0 polls (Iprobe) Iprobe from rank 1 tag 3", "rank 0 polls without success in Iprobe from rank 1 tag 3 at ", line} {
		if !strings.Contains(sum.Text(), want) {
			t.Errorf("message lacks %q:\n%s", want, sum.Text())
		}
	}
}

const slowReduceOp = `#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
/* slow_sum works inside the MPI_Reduce that calls it, touching MIB MiB it
 * never touched (48 by default: 3 s), four pages a millisecond (as a
 * library allocating and zeroing a large window does), then sums. */
static void slow_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
	const char *mib = getenv("MIB");
	size_t n = (size_t)(mib ? atoi(mib) : 48) << 20;
	char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec ms = {0, 1000000};
	(void)dt;
	if (m != MAP_FAILED) {
		madvise(m, n, MADV_NOHUGEPAGE);
		for (size_t i = 0; i < n; i += 4096) {
			m[i] = 1;
			if (i % (4 * 4096) == 0)
				nanosleep(&ms, NULL);
		}
		munmap(m, n);
	}
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}
int main(int argc, char **argv) {
	int rank, x, sum = 0;
	MPI_Op op;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	x = rank + 1;
	MPI_Op_create(slow_sum, 1, &op);
	MPI_Reduce(&x, &sum, 1, MPI_INT, op, 0, MPI_COMM_WORLD);
	MPI_Op_free(&op);
	if (rank == 0)
		printf("sum %d\n", sum);
	MPI_Finalize();
	return 0;
}
`

// recordSlowOp records slowReduceOp with its op touching mib MiB, under
// the hang timeout given, and returns the summary and what the job printed.
func recordSlowOp(t *testing.T, hangTimeout time.Duration, mib int) (*recorder.Summary, string) {
	t.Helper()
	mpitest.RequireMPI(t)
	dir := t.TempDir()
	exe, _ := mpiProgram(t, dir, "slowop", slowReduceOp)
	var log, stdout bytes.Buffer
	sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{
		Program: exe, Ranks: 2, Output: filepath.Join(dir, "slowop.db"), HangTimeout: hangTimeout,
		MPIArgs: []string{"-x", fmt.Sprintf("MIB=%d", mib)},
		Stdout:  &stdout, Stderr: &log, Log: &log,
	})
	if err != nil {
		t.Fatalf("RecordMPI: %v\n%s", err, log.String())
	}
	return sum, stdout.String()
}

// TestRecordMPISlowCallIsNotHang: a rank at work inside a call for three
// times the hang timeout (a reduction op touching fresh memory, as a
// library allocating a large window does), while the other waits in
// MPI_Finalize, is slow, not hung: the monitor sees its page faults grow
// (working), and the job completes.
func TestRecordMPISlowCallIsNotHang(t *testing.T) {
	t.Parallel()
	sum, stdout := recordSlowOp(t, time.Second, 48)
	if sum.Header.Status != trace.StatusComplete || len(sum.Header.Findings) != 0 {
		t.Fatalf("status %q, %d findings; want complete, none:\n%s", sum.Header.Status, len(sum.Header.Findings), sum.Text())
	}
	if !strings.Contains(stdout, "sum 3") {
		t.Errorf("the job printed %q, want the sum 3", stdout)
	}
}

// TestRecordMPIWorkHasALimit: work inside calls keeps a job alive for 12
// hang timeouts at most (workingLimit): a rank that faults for ever while
// no rank makes a call is ended as hung all the same, so p2ptrace never
// waits for ever. Here the reduction op would work for 30 s; with a hang
// timeout of 0.5 s the job is ended after about 6.
func TestRecordMPIWorkHasALimit(t *testing.T) {
	t.Parallel()
	start := time.Now()
	sum, _ := recordSlowOp(t, 500*time.Millisecond, 480)
	if sum.Header.Status != trace.StatusHung {
		t.Fatalf("status %q after %v, want hung:\n%s", sum.Header.Status, time.Since(start), sum.Text())
	}
	if d := time.Since(start); d > 25*time.Second {
		t.Errorf("took %v: the work went on past its limit (6 s)", d)
	}
}
