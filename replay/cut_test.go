package replay_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// TestKilledRecordingChecksClean: a correct program killed with SIGKILL
// while it records leaves a trace cut mid-run. Its ops pending at the cut
// are not program findings: check finds nothing, and the report says where
// each rank's record ends and why.
func TestKilledRecordingChecksClean(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a recorded program; skipped with -short")
	}
	t.Parallel()
	root := scenariotest.ModuleRoot(t)
	bin := scenariotest.Build(t, root)
	path := filepath.Join(t.TempDir(), "killed.db")
	cmd := exec.Command(filepath.Join(bin, "ring"), "-ranks", "4", "-iters", "100000000", "-bytes", "4096")
	cmd.Env = append(os.Environ(), gpu.EnvTrace+"="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Past the first timed flushes (every ~100 ms), so that events are there.
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(200 * time.Millisecond)
		if st, err := os.Stat(path); err == nil && st.Size() > 256<<10 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no trace written after 10 s")
		}
	}
	cmd.Process.Kill()
	cmd.Wait()

	tr, err := replay.OpenTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.Header().Status != trace.StatusRunning {
		t.Fatalf("status %q, want running (cut short)", tr.Header().Status)
	}
	rep, err := replay.CheckTrace(tr, replay.CheckOptions{MaxForced: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 0 {
		t.Fatalf("a killed correct program has findings:\n%s", rep.Text())
	}
	if len(rep.Ends) == 0 {
		t.Fatalf("the report does not say where the records end:\n%s", rep.Text())
	}
	for _, e := range rep.Ends {
		if e.Last == nil || e.Why == "" || e.Last.Site == "" {
			t.Errorf("rank %d's end names no call or reason: %+v", e.Rank, e)
		}
	}
}

// TestCrashedTraceChecksToACrash: a rank that panics ends the run crashed;
// the crash is a finding of check, at the rank's last runtime call, and the
// other ranks' pending calls are not.
func TestCrashedTraceChecksToACrash(t *testing.T) {
	tr := recordedTrace(t, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 4)
		if r.ID() == 0 {
			if _, err := r.Recv(b, 1, 0); err != nil {
				return err
			}
			_, err := r.Recv(b, 1, 1) // rank 1 dies before it sends this
			return err
		}
		if err := r.Send(b, 0, 0); err == nil { // culprit: last-call
			var m map[int]int
			m[0]++
		}
		return nil
	}, func(fs []verdict.Finding) []verdict.Finding { return fs })
	rep, err := replay.CheckTrace(tr, replay.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	last := fmt.Sprintf("cut_test.go:%d", scenariotest.MarkerLine(t, "cut_test.go", "last-call"))
	if len(rep.Findings) != 1 || rep.Findings[0].Kind != verdict.Crash || !slices.Equal(rep.Findings[0].Ranks, []int{1}) ||
		len(rep.Findings[0].Ops) != 1 || rep.Findings[0].Ops[0].Site != last {
		t.Fatalf("want the crash of rank 1 at its last call %s, alone:\n%s", last, rep.Text())
	}
	if len(rep.Ends) != 2 || rep.Ends[1].Last == nil || rep.Ends[1].Last.Site != last {
		t.Fatalf("want both ranks' record ends, rank 1's at %s:\n%s", last, rep.Text())
	}
}

// TestCheckTraceKeepsARecordedFindingOnce: a finding the recording made
// (as the MPI merge writes an MPI_ERR_TRUNCATE: the call's name, its rank
// and line) and the battery's finding of the same bug (the truncation of
// the same receive, with its sender) are one: check reports the recorded
// one alone (before: both). A battery finding at another line is kept.
func TestCheckTraceKeepsARecordedFindingOnce(t *testing.T) {
	recv := fmt.Sprintf("cut_test.go:%d", scenariotest.MarkerLine(t, "cut_test.go", "short-recv"))
	mpiError := func(site string) verdict.Finding {
		return verdict.New(verdict.Truncation, []int{1}, "rank 1: MPI error in MPI_Recv: MPI_ERR_TRUNCATE: message truncated",
			verdict.OpRef{Rank: 1, Op: "MPI_Recv", Peer: trace.NoRank, Tag: -1, Site: site, Call: "MPI_Recv"})
	}
	for _, tc := range []struct {
		name     string
		recorded verdict.Finding
		want     []string // the findings' messages, in order
	}{
		{"same receive", mpiError(recv), []string{"rank 1: MPI error in MPI_Recv: MPI_ERR_TRUNCATE: message truncated"}},
		{"another line", mpiError("other.c:1"), []string{"rank 1: MPI error in MPI_Recv: MPI_ERR_TRUNCATE: message truncated",
			"rank 0 sent 32 bytes, rank 1's receive buffer holds 16"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := recordedTrace(t, func(r *gpu.Rank) error {
				if r.ID() == 0 {
					return r.Send(r.Alloc(gpu.Int32, 8), 1, 0)
				}
				_, err := r.Recv(r.Alloc(gpu.Int32, 4), 0, 0) // culprit: short-recv
				return err
			}, func([]verdict.Finding) []verdict.Finding { return []verdict.Finding{tc.recorded} })
			rep, err := replay.CheckTrace(tr, replay.CheckOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.Message)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("findings %q, want %q:\n%s", got, tc.want, rep.Text())
			}
		})
	}
}

// recordedTrace runs fn on two ranks of the gpu runtime recording into a
// trace, stores as its header's findings what findings makes of the run's
// own (as a recorder would), and opens it.
func recordedTrace(t *testing.T, fn func(r *gpu.Rank) error, findings func([]verdict.Finding) []verdict.Finding) *replay.Trace {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.db")
	w, err := trace.Create(path, trace.Header{Command: []string{"test"}, WorldSize: 2, Backend: "sim"}, trace.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	status, fs := gpu.Outcome(gpu.Launch(2, fn, gpu.RecordTo(w)))
	w.SetHeader(func(h *trace.Header) { h.Findings = findings(fs) })
	if err := w.Close(status, ""); err != nil {
		t.Fatal(err)
	}
	tr, err := replay.OpenTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}
