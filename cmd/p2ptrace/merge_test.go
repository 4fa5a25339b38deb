package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

const mergePingC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, v = 7;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) MPI_Send(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    else MPI_Recv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (argc > 1 && argv[1][0] == 'a' && rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);
    if (argc > 1 && argv[1][0] == 'l') { /* leak: an Isend never waited */
        MPI_Request q;
        if (rank == 0) MPI_Isend(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &q);
        else MPI_Recv(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
`

// recordPing builds the shim with the command, runs two ranks of a ping
// under it and returns the segment directory.
func recordPing(t *testing.T, mode string) string {
	t.Helper()
	mpitest.RequireMPI(t)
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	code, out, errOut := runCmd(t, "mpi", "build-shim")
	so := strings.TrimSpace(out)
	if code != 0 || !strings.HasSuffix(so, ".so") {
		t.Fatalf("build-shim: exit %d, out %q, err %q", code, out, errOut)
	}
	if _, err := os.Stat(so); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "ping.c")
	if err := os.WriteFile(src, []byte(mergePingC), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ping")
	if b, err := exec.Command("mpicc", "-g", "-O0", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, b)
	}
	segs := filepath.Join(dir, "segs")
	args := []string{"-n", "2", "--oversubscribe", "-x", "LD_PRELOAD=" + so, "-x", "P2PTRACE_SEGDIR=" + segs, bin}
	if mode != "" {
		args = append(args, mode)
	}
	cmd := exec.Command("mpirun", args...)
	cmd.Env = mpitest.RunEnv()
	b, err := cmd.CombinedOutput()
	if (err != nil) != (mode == "abort") {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	return segs
}

func TestMergeCommand(t *testing.T) {
	segs := recordPing(t, "")
	out := filepath.Join(filepath.Dir(segs), "run.p2ptrace")
	code, stdout, stderr := runCmd(t, "merge", segs, "-o", out)
	if code != 0 || !strings.Contains(stdout, "2 ranks") || !strings.Contains(stdout, "status complete") {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	r, err := trace.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	r.Close()
	if h.Status != trace.StatusComplete || h.WorldSize != 2 {
		t.Errorf("header %+v", h)
	}
	// The file exists now: refused without --force, replaced with it.
	if code, _, stderr := runCmd(t, "merge", segs, "-o", out); code != 2 || !strings.Contains(stderr, "--force") {
		t.Errorf("merge over an existing trace: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "merge", segs, "-o", out, "--force"); code != 0 {
		t.Errorf("merge --force: exit %d, %s", code, stderr)
	}
}

func TestMergeCommandAborted(t *testing.T) {
	segs := recordPing(t, "abort")
	out := filepath.Join(filepath.Dir(segs), "run.p2ptrace")
	code, stdout, stderr := runCmd(t, "merge", segs, "-o", out)
	if code != 1 || !strings.Contains(stdout, "rank 1: aborted at ") || !strings.Contains(stdout, "ping.c:8: MPI_Abort called with error code 3") ||
		!strings.Contains(stdout, "[1] crash (cause: program)\n    rank 1: MPI_Abort called with error code 3") || !strings.Contains(stderr, "did not complete (status crashed)") {
		t.Fatalf("merge of an aborted job: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestMergeCommandErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"merge"}, "want one segment directory"},
		{[]string{"merge", filepath.Join(dir, "nope")}, "no such file"},
		{[]string{"merge", dir, "-o", filepath.Join(dir, "t.db")}, "no segments"},
	} {
		code, _, stderr := runCmd(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	os.WriteFile(filepath.Join(dir, "rank-0.seg"), []byte("not a segment at all"), 0o644)
	code, _, stderr := runCmd(t, "merge", dir, "-o", filepath.Join(dir, "t.db"))
	if code != 2 || !strings.Contains(stderr, "rank-0.seg") {
		t.Errorf("foreign segment: exit %d, stderr %q", code, stderr)
	}
}

func TestBuildShimNoMPICC(t *testing.T) {
	code, out, stderr := runCmd(t, "mpi", "build-shim", "--mpicc", filepath.Join(t.TempDir(), "no-mpicc"))
	if code != 2 || out != "" || !strings.Contains(stderr, "mpicc not found") {
		t.Errorf("exit %d, out %q, stderr %q", code, out, stderr)
	}
}

// TestMergeCommandReportsFindings: merging the segments of a job launched by
// hand says what the run showed, as record -n does: an Isend never waited is
// a missing Wait (exit 1), in the trace's message.
func TestMergeCommandReportsFindings(t *testing.T) {
	segs := recordPing(t, "leak")
	out := filepath.Join(filepath.Dir(segs), "leak.p2ptrace")
	code, stdout, stderr := runCmd(t, "merge", segs, "-o", out)
	if code != exitFindings || !strings.Contains(stdout, "status complete") || !strings.Contains(stdout, "[1] missing-wait (cause: program)\n    rank 0: request of Isend") {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "ping.c:") {
		t.Errorf("the finding names no line of ping.c:\n%s", stdout)
	}
}
