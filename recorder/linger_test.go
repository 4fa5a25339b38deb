package recorder_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// lingeringLauncher writes a launcher that runs the real mpirun and then,
// instead of exiting, sleeps in its place: what Open MPI 4.1.4's mpirun
// sometimes does in its own finalize after an MPI error aborted the job
// (seen hanging a check's re-run for ten minutes).
func lingeringLauncher(t *testing.T, dir string) string {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mpirun-lingers")
	script := "#!/bin/sh\n\"" + mpirun + "\" \"$@\"\nexec sleep 600\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

const finalizeThenCompute = `#include <mpi.h>
#include <unistd.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, x = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
	else MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	if (argc > 1) sleep(7); /* work of its own after MPI_Finalize, longer than the 5 s a launcher may linger */
	return 0;
}
`

// TestRecordMPIEndsLingeringLauncher: every rank finalized and the launcher
// does not exit: it is ended after lingerTimeout (5 s here), and the recording is
// complete and clean (only the launcher hung, not the program).
func TestRecordMPIEndsLingeringLauncher(t *testing.T) {
	mpitest.RequireMPI(t)
	t.Parallel()
	dir := t.TempDir()
	exe, _ := mpiProgram(t, dir, "finalize", finalizeThenCompute)
	var log bytes.Buffer
	start := time.Now()
	sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{
		Program: exe, Ranks: 2, Output: filepath.Join(dir, "linger.db"), MPIRun: lingeringLauncher(t, dir),
		HangTimeout: time.Second, Stdout: io.Discard, Stderr: &log, Log: &log,
	})
	if err != nil {
		t.Fatalf("RecordMPI: %v\n%s", err, log.String())
	}
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("took %v: the lingering launcher was not ended after the hang timeout", took)
	}
	if sum.Header.Status != trace.StatusComplete || !sum.Clean() {
		t.Errorf("status %q, clean %v; want complete and clean:\n%s", sum.Header.Status, sum.Clean(), sum.Text())
	}
	if !strings.Contains(log.String(), "the ranks ended 5s ago but the launcher did not exit; ending it") {
		t.Errorf("log does not say the launcher was ended:\n%s", log.String())
	}
}

// TestRecordMPIEndsLingeringLauncherAfterAbort: a rank aborted, the launcher
// does not exit: ended after lingerTimeout, the trace crashed with the
// abort named, the program failed (as when the launcher exits by itself).
func TestRecordMPIEndsLingeringLauncherAfterAbort(t *testing.T) {
	mpitest.RequireMPI(t)
	t.Parallel()
	dir := t.TempDir()
	exe, _ := mpiProgram(t, dir, "abort", abortAfterSend)
	sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{
		Program: exe, Ranks: 2, Output: filepath.Join(dir, "abort.db"), MPIRun: lingeringLauncher(t, dir),
		HangTimeout: time.Second, Stdout: io.Discard, Stderr: io.Discard,
	})
	if !errors.Is(err, recorder.ErrProgramFailed) {
		t.Fatalf("RecordMPI: %v, want ErrProgramFailed", err)
	}
	if sum == nil || sum.Header.Status != trace.StatusCrashed || !strings.Contains(sum.Text(), "MPI_Abort") {
		t.Fatalf("want a crashed trace naming MPI_Abort, got:\n%v", sum)
	}
}

// TestRecordMPIWaitsForRanksComputingAfterFinalize: a rank that finalized
// and goes on with work of its own for longer than a launcher may linger
// (5 s) is not a lingering launcher (its launcher still has a live child):
// the job runs to its end.
func TestRecordMPIWaitsForRanksComputingAfterFinalize(t *testing.T) {
	mpitest.RequireMPI(t)
	t.Parallel()
	dir := t.TempDir()
	exe, _ := mpiProgram(t, dir, "finalize", finalizeThenCompute)
	var log bytes.Buffer
	sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{
		Program: exe, Args: []string{"compute"}, Ranks: 2, Output: filepath.Join(dir, "compute.db"),
		HangTimeout: time.Second, Stdout: io.Discard, Stderr: &log, Log: &log,
	})
	if err != nil {
		t.Fatalf("RecordMPI: %v\n%s", err, log.String())
	}
	if strings.Contains(log.String(), "did not exit") || sum.Header.Status != trace.StatusComplete || !sum.Clean() {
		t.Errorf("the job was ended early or is not clean:\n%s\n%s", log.String(), sum.Text())
	}
}

// TestRecordMPIDoesNotWaitForOutputHeldOutsideTheJob: the launcher exits,
// but a process that left its session (a daemon) holds the launcher's
// output open. Output going to a writer other than a file is copied from a
// pipe, and a Wait for the pipe's end would never return: the recording
// must end once the launcher has, and a little grace.
func TestRecordMPIDoesNotWaitForOutputHeldOutsideTheJob(t *testing.T) {
	mpitest.RequireMPI(t)
	t.Parallel()
	dir := t.TempDir()
	exe, _ := mpiProgram(t, dir, "finalize", finalizeThenCompute)
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "daemon.pid")
	launcher := filepath.Join(dir, "mpirun-leaves-a-daemon")
	script := "#!/bin/sh\n\"" + mpirun + "\" \"$@\"\nstatus=$?\nsetsid sleep 600 &\necho $! >\"" + pidFile + "\"\nexit $status\n"
	if err := os.WriteFile(launcher, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	var stdout, log bytes.Buffer // (not files: the launcher writes into pipes)
	done := make(chan struct{})
	var sum *recorder.Summary
	go func() {
		defer close(done)
		sum, err = recorder.RecordMPI(context.Background(), recorder.MPIOptions{
			Program: exe, Ranks: 2, Output: filepath.Join(dir, "daemon.db"), MPIRun: launcher,
			HangTimeout: time.Second, Stdout: &stdout, Stderr: &log, Log: &log,
		})
	}()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		t.Fatalf("RecordMPI has not returned 90 s after it started: it waits for output a process outside the job holds open\n%s", log.String())
	}
	if err != nil {
		t.Fatalf("RecordMPI: %v\n%s", err, log.String())
	}
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("the launcher left no daemon (%v): the test tests nothing", err)
	}
	if sum.Header.Status != trace.StatusComplete || !sum.Clean() {
		t.Errorf("status %q, clean %v; want complete and clean:\n%s", sum.Header.Status, sum.Clean(), sum.Text())
	}
}
