package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/internal/pytest"
	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/replay"
)

// recordMPI4Py records testdata/mpi4py/name.py (with args) as n ranks
// under mpirun with the shim, and returns the trace's path, the summary and
// "name.py:LINE" of the line holding marker.
func recordMPI4Py(t *testing.T, name string, n int, marker string, args ...string) (string, *recorder.Summary, string) {
	t.Helper()
	mpitest.RequireMPI(t)
	pytest.RequireMPI4Py(t)
	script, err := filepath.Abs(filepath.Join("..", "testdata", "mpi4py", name+".py"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range mpitest.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	out := filepath.Join(t.TempDir(), name+".db")
	var stdout, stderr bytes.Buffer
	sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{
		Program: pytest.Python, Args: append([]string{script}, args...), Ranks: n, Output: out, Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil {
		t.Fatalf("record: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	return out, sum, fmt.Sprintf("%s.py:%d", name, lineOf(t, string(src), marker))
}

// TestRecordMPI4Py records mpi4py programs through the C shim: their sites
// are the Python lines of the calls, not mpi4py's C frames.
func TestRecordMPI4Py(t *testing.T) {
	t.Run("headtohead", func(t *testing.T) {
		path, sum, line := recordMPI4Py(t, "headtohead", 2, "# both ranks send first")
		if !sum.Clean() {
			t.Fatalf("recording: status %s (the sends are eager, it completes):\n%s", sum.Header.Status, sum.Header.Message)
		}
		tr, err := replay.OpenTrace(path)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		specs, err := faults.ParseAll([]string{"sync"})
		if err != nil {
			t.Fatal(err)
		}
		fs, err := replay.Run(tr.Open, tr.Config(), tr.Site, specs, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.Kind == "deadlock" && len(f.Ops) == 2 && strings.HasSuffix(f.Ops[0].Site, line) && strings.HasSuffix(f.Ops[1].Site, line) {
				return
			}
		}
		t.Errorf("no deadlock under sync naming %s for both ranks: %+v", line, fs)
	})
	t.Run("buffers", func(t *testing.T) {
		// A pending Iallreduce's receive buffer written, and a Gatherv's
		// counts that disagree: the C shim's rules hold for mpi4py too
		// (its MPI_THREAD_MULTIPLE no longer turns the buffer watch off).
		_, sum, iallreduce := recordMPI4Py(t, "buffers", 2, "# iallreduce")
		src, err := os.ReadFile(filepath.Join("..", "testdata", "mpi4py", "buffers.py"))
		if err != nil {
			t.Fatal(err)
		}
		line := func(marker string) string { return fmt.Sprintf("buffers.py:%d", lineOf(t, string(src), marker)) }
		msg := sum.Text()
		for _, want := range []string{
			"recv-buffer-write (cause: program)\n    rank 1: the receive buffer of MPI_Iallreduce at ",
			iallreduce, line("# wait"),
			"collective call 2 on the world (MPI_Gatherv): the root, rank 0, expects 12 bytes from rank 1, which sends 8",
			line("# gatherv root"), line("# gatherv sender"),
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("the recording does not say %q:\n%s", want, msg)
			}
		}
		if n := len(sum.Header.Findings); n != 2 {
			t.Errorf("%d findings, want 2:\n%s", n, msg)
		}
		_, sum, _ = recordMPI4Py(t, "buffers", 2, "# iallreduce", "--fixed")
		if !sum.Clean() || len(sum.Header.Findings) != 0 {
			t.Errorf("record --fixed:\n%s", sum.Text())
		}
	})
	t.Run("isend_nowait", func(t *testing.T) {
		_, sum, line := recordMPI4Py(t, "isend_nowait", 2, "# never waited")
		msg := sum.Text()
		if !strings.Contains(msg, "missing-wait (cause: program)\n    rank 0: request of Isend (peer 1, tag 1)") || !strings.Contains(msg, line) {
			t.Errorf("recording does not report the missing wait at %s:\n%s", line, msg)
		}
	})
}
