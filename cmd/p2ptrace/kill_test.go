package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/internal/proc"
	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
	"github.com/p2ptrace/p2ptrace/recorder/mpi"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestMain lets a test run the command in a process of its own (the test
// binary re-executed with P2PTRACE_TEST_MAIN=1), to kill it for real.
func TestMain(m *testing.M) {
	if os.Getenv("P2PTRACE_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	mpitest.UseTestPML()
	os.Exit(m.Run())
}

// cli starts p2ptrace ARGS as a process, with TMPDIR set to tmp.
func cli(t *testing.T, tmp string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "P2PTRACE_TEST_MAIN=1", "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// waitFor polls cond for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func buildDirs(tmp string) []string {
	dirs, _ := filepath.Glob(filepath.Join(tmp, "p2ptrace-build-*"))
	return dirs
}

// kill -9 of `p2ptrace record`: the recorded program ends with it (it kept
// recording, re-parented to init), its trace stays readable and says it was
// cut short, and a build directory left by a recorder killed while building
// is removed by the next recording.
func TestRecordKilled(t *testing.T) {
	t.Parallel()
	ring := filepath.Join(scenariotest.ModuleRoot(t), "testdata", "train", "ring")
	tmp := t.TempDir()
	out := filepath.Join(tmp, "ring.p2ptrace")

	// Killed while it builds the program: go build ends too.
	rec := cli(t, tmp, "record", "-o", out, ring, "-ranks", "4", "-iters", "100000000", "-bytes", "64")
	var kids []int
	if !waitFor(time.Minute, func() bool {
		kids = proc.Children(rec.Process.Pid)
		return len(kids) > 0 && len(buildDirs(tmp)) == 1
	}) {
		t.Fatalf("the build did not start (children %v)", kids)
	}
	building := buildDirs(tmp)[0]
	rec.Process.Signal(syscall.SIGKILL)
	rec.Wait()
	assertEnded(t, kids)
	os.Remove(out)

	// Killed while the program runs.
	rec = cli(t, tmp, "record", "-o", out, ring, "-ranks", "4", "-iters", "100000000", "-bytes", "64")
	if !waitFor(2*time.Minute, func() bool {
		kids = proc.Children(rec.Process.Pid)
		fi, err := os.Stat(out)
		return len(kids) > 0 && err == nil && fi.Size() > 0 && len(buildDirs(tmp)) == 1
	}) {
		t.Fatalf("the program did not start (children %v)", kids)
	}
	time.Sleep(300 * time.Millisecond) // a few flushes
	rec.Process.Signal(syscall.SIGKILL)
	rec.Wait()
	assertEnded(t, kids)
	r, err := trace.Open(out)
	if err != nil {
		t.Fatalf("the trace of a killed recording: %v", err)
	}
	h := r.Header()
	r.Close()
	// The program got SIGTERM from the kernel and said so in its trace.
	if h.Status != trace.StatusCrashed || !strings.Contains(h.Message, "interrupted by terminated") {
		t.Errorf("status %q, message %q", h.Status, h.Message)
	}
	// This recording removed the directory of the one killed building.
	if dirs := buildDirs(tmp); len(dirs) != 1 || dirs[0] == building {
		t.Fatalf("build dirs %v (the stale one: %s)", dirs, building)
	}

	// The next recording removes the directory of the dead recorder.
	next := cli(t, tmp, "record", "--force", "-o", out, ring, "-ranks", "2", "-iters", "1")
	if err := next.Wait(); err != nil {
		t.Fatalf("record: %v", err)
	}
	if dirs := buildDirs(tmp); len(dirs) != 0 {
		t.Errorf("build directories left: %v", dirs)
	}
}

const foreverC = `#include <mpi.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (;;) {
        if (rank == 0) MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        else MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        usleep(1000);
    }
}
`

// kill -9 of `p2ptrace record -n 2`: mpirun and every rank end with it.
func TestRecordMPIKilled(t *testing.T) {
	t.Parallel()
	mpitest.RequireMPI(t)
	tmp := t.TempDir()
	exe := buildForever(t, tmp)
	rec := cli(t, tmp, "record", "-n", "2", "-o", filepath.Join(tmp, "mpi.p2ptrace"), exe)
	var pids []int
	if !waitFor(time.Minute, func() bool {
		pids = proc.Children(rec.Process.Pid) // mpirun
		segs, _ := filepath.Glob(filepath.Join(tmp, "p2ptrace-segments-*", "rank-*.seg"))
		for _, seg := range segs {
			if ls, err := mpi.ReadLiveState(seg); err == nil && ls.Calls > 10 {
				pids = append(pids, ls.PID)
			}
		}
		return len(pids) == 3
	}) {
		t.Fatalf("the job did not start (pids %v)", pids)
	}
	rec.Process.Signal(syscall.SIGKILL)
	rec.Wait()
	assertEnded(t, pids)
}

// buildForever compiles foreverC into dir.
func buildForever(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "forever.c")
	if err := os.WriteFile(src, []byte(foreverC), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "forever")
	if out, err := exec.Command("mpicc", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	return exe
}

// assertEnded fails the test unless every pid ends within 10 s (and kills them).
func assertEnded(t *testing.T, pids []int) {
	t.Helper()
	if !waitFor(10*time.Second, func() bool {
		for _, pid := range pids {
			if proc.Running(pid) {
				return false
			}
		}
		return true
	}) {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("processes %v outlived the recorder", pids)
	}
}

// kill -9 of one rank of `p2ptrace record -n 2`: the job ends, no process
// is left, and the trace is readable and says the job crashed.
func TestRecordMPIRankKilled(t *testing.T) {
	t.Parallel()
	mpitest.RequireMPI(t)
	tmp := t.TempDir()
	exe := buildForever(t, tmp)
	out := filepath.Join(tmp, "mpi.p2ptrace")
	rec := cli(t, tmp, "record", "-n", "2", "-o", out, exe)
	ranks := map[int]int{}
	if !waitFor(time.Minute, func() bool {
		segs, _ := filepath.Glob(filepath.Join(tmp, "p2ptrace-segments-*", "rank-*.seg"))
		for _, seg := range segs {
			if ls, err := mpi.ReadLiveState(seg); err == nil && ls.Calls > 10 {
				ranks[ls.Rank] = ls.PID
			}
		}
		return len(ranks) == 2
	}) {
		t.Fatalf("the job did not start (ranks %v)", ranks)
	}
	mpirun := proc.Children(rec.Process.Pid)
	syscall.Kill(ranks[1], syscall.SIGKILL)
	done := make(chan error, 1)
	go func() { done <- rec.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("record: %v, want exit 1 (the program failed)", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the recorder did not end when a rank was killed")
	}
	assertEnded(t, append(mpirun, ranks[0], ranks[1]))
	r, err := trace.Open(out)
	if err != nil {
		t.Fatalf("the trace of a job with a killed rank: %v", err)
	}
	defer r.Close()
	if h := r.Header(); h.Status != trace.StatusCrashed {
		t.Errorf("status %q, message %q", h.Status, h.Message)
	}
}
