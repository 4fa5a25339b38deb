package recorder_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"io"
	"os"
	"os/exec"
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

// mpiProgram compiles the C source src with mpicc -g into dir and returns
// the executable and the source's path.
func mpiProgram(t *testing.T, dir, name, src string) (exe, source string) {
	t.Helper()
	source = filepath.Join(dir, name+".c")
	if err := os.WriteFile(source, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(dir, name)
	if out, err := exec.Command("mpicc", "-g", "-O0", "-o", exe, source).CombinedOutput(); err != nil {
		t.Fatalf("mpicc %s: %v\n%s", name, err, out)
	}
	return exe, source
}

// lineOf is the 1-based line of the unique line of src containing marker.
func lineOf(t *testing.T, src, marker string) int {
	t.Helper()
	n := 0
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			if n != 0 {
				t.Fatalf("marker %q twice", marker)
			}
			n = i + 1
		}
	}
	if n == 0 {
		t.Fatalf("no marker %q", marker)
	}
	return n
}

const recvRecv = `#include <mpi.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, x = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int peer = 1 - rank;
	MPI_Recv(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* HANG */
	MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
`

// TestRecordMPIHangEndsJobAndNamesCycle: both ranks in a blocking MPI_Recv.
// The job is detected hung within the hang timeout, ended (no process of it
// is left), the trace says hung, and the header message carries the replay's
// wait-for cycle with the C source line of each blocked call.
func TestRecordMPIHangEndsJobAndNamesCycle(t *testing.T) {
	mpitest.RequireMPI(t)
	t.Parallel()
	dir := t.TempDir()
	exe, source := mpiProgram(t, dir, "recvrecv", recvRecv)
	segs := filepath.Join(dir, "segments")
	out := filepath.Join(dir, "hung.db")
	var log bytes.Buffer
	start := time.Now()
	sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{
		Program: exe, Ranks: 2, Output: out, Segments: segs, HangTimeout: time.Second,
		Stdout: io.Discard, Stderr: &log, Log: &log,
	})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("RecordMPI: %v\n%s", err, log.String())
	}
	// Startup of two ranks, one second of silence, the end of the job.
	if took > 20*time.Second {
		t.Errorf("hang reported after %v; want about the hang timeout (1s) plus startup", took)
	}
	if sum.Header.Status != trace.StatusHung || sum.Clean() {
		t.Fatalf("status %q, clean %v; want hung", sum.Header.Status, sum.Clean())
	}
	line := fmt.Sprintf("%s:%d", filepath.Base(source), lineOf(t, recvRecv, "HANG"))
	msg := sum.Text()
	for _, want := range []string{"hang detected while recording", "[1] deadlock (cause: program)", "rank 0 -> rank 1 -> rank 0", "rank 0 blocked in Recv", "rank 1 blocked in Recv", line} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	for r := range 2 {
		st, err := mpi.ReadLiveState(mpi.SegmentPath(segs, r))
		if err != nil {
			t.Fatal(err)
		}
		if st.PID <= 0 {
			t.Fatalf("rank %d: no pid in its segment", r)
		}
		if proc.Running(st.PID) {
			t.Errorf("rank %d (pid %d) still runs after the job was ended", r, st.PID)
		}
	}
}

const abortAfterSend = `#include <mpi.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, x = 7;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
		MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* rank 1 got it */
		MPI_Abort(MPI_COMM_WORLD, 3); /* ABORT */
	} else {
		MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
`

// TestRecordMPIAbortIsCrashed: a rank calling MPI_Abort makes the trace
// crashed, the summary names the abort, and the events before it are kept.
func TestRecordMPIAbortIsCrashed(t *testing.T) {
	mpitest.RequireMPI(t)
	t.Parallel()
	dir := t.TempDir()
	exe, _ := mpiProgram(t, dir, "abort", abortAfterSend)
	out := filepath.Join(dir, "abort.db")
	sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{
		Program: exe, Ranks: 2, Output: out, HangTimeout: 10 * time.Second, Stdout: io.Discard, Stderr: io.Discard,
	})
	if !errors.Is(err, recorder.ErrProgramFailed) {
		t.Fatalf("RecordMPI of an aborting job: %v, want ErrProgramFailed", err)
	}
	if sum == nil || sum.Header.Status != trace.StatusCrashed {
		t.Fatalf("summary %+v, want status crashed", sum)
	}
	if fs := sum.Header.Findings; len(fs) != 1 || fs[0].Kind != verdict.Crash || !strings.Contains(fs[0].Message, "MPI_Abort") {
		t.Errorf("findings %+v, want one crash naming the abort:\n%s", fs, sum.Text())
	}
	if sum.Ops < 4 {
		t.Errorf("%d ops kept, want at least both ranks' Send and Recv", sum.Ops)
	}
}

// TestRecordMPIUsageErrors: what is wrong with the request is an ErrUsage
// that says what to do, before anything runs.
func TestRecordMPIUsageErrors(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	exists := filepath.Join(dir, "exists.db")
	if err := os.WriteFile(exists, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    recorder.MPIOptions
		want string
	}{
		{"no ranks", recorder.MPIOptions{Program: "/bin/true", Ranks: 0}, "want at least one rank"},
		{"missing program", recorder.MPIOptions{Program: filepath.Join(dir, "nope"), Ranks: 2, Output: filepath.Join(dir, "a.db")}, "no such program"},
		{"directory", recorder.MPIOptions{Program: dir, Ranks: 2, Output: filepath.Join(dir, "b.db")}, "is a directory"},
		{"not executable", recorder.MPIOptions{Program: plain, Ranks: 2, Output: filepath.Join(dir, "c.db")}, "is not executable"},
		{"output exists", recorder.MPIOptions{Program: "/bin/true", Ranks: 2, Output: exists}, "already exists"},
		{"bad hash", recorder.MPIOptions{Program: "/bin/true", Ranks: 2, Hash: "md5"}, "want full, sample or off"},
		{"no launcher", recorder.MPIOptions{Program: "/bin/true", Ranks: 2, Output: filepath.Join(dir, "d.db"), MPIRun: filepath.Join(dir, "no-mpirun")}, "no MPI launcher"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := recorder.RecordMPI(context.Background(), tc.o)
			if !errors.Is(err, recorder.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want ErrUsage containing %q", err, tc.want)
			}
		})
	}
}

// TestRecordMPINotAnMPIProgram: a program that never calls MPI leaves no
// segment; that is said plainly. Given by a bare name ("true", as
// "python3" in `-- python3 prog.py`), it is looked up on PATH, as a shell
// would: before, that was "no such program: true".
func TestRecordMPINotAnMPIProgram(t *testing.T) {
	mpitest.RequireMPI(t)
	t.Parallel()
	for _, prog := range []string{"/bin/true", "true"} {
		_, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{
			Program: prog, Ranks: 2, Output: filepath.Join(t.TempDir(), "t.db"), Stdout: io.Discard, Stderr: io.Discard,
		})
		if !errors.Is(err, recorder.ErrNoCalls) || !strings.Contains(err.Error(), "MPI program") {
			t.Fatalf("%s: err = %v; want ErrNoCalls saying it must be an MPI program", prog, err)
		}
	}
}
