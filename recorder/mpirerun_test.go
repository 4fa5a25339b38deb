package recorder_test

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
	"github.com/p2ptrace/p2ptrace/internal/testjobs"
	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// mpiJobs is how many MPI jobs a test runs at once: a job mostly waits
// (launcher startup, re-runs' startup), so more than CI's 2 cores' worth.
const mpiJobs = 4

// TestMPIRaceJudgedByRerunningTheJob: an MPI_ANY_SOURCE race whose other
// order the model replays cleanly is judged by re-running the job with the
// receive pinned to the other sender (the shim's P2PTRACE_FORCE_MATCH):
// testdata/mpi/anysource-assume aborts that way: a message-race with the
// evidence; so does anysource-last-sender, whose three senders share a
// line (only the re-run that pins its first receive to rank 3, a further
// sender of that pair of lines, aborts); so does probe-race, its race a probe's (MPI_Probe from
// MPI_ANY_SOURCE, then a receive from the status's source), the probe
// pinned. anysource-race, master-worker, probe-race-fixed and
// anysource-irecv-pair are correct with MPI_ANY_SOURCE: a note, no finding
// (anysource-irecv-pair's second receive, pinned, may wait for a message
// its first took: a re-run the pin hung, no evidence).
func TestMPIRaceJudgedByRerunningTheJob(t *testing.T) {
	mpitest.RequireMPI(t)
	t.Parallel()
	dir := t.TempDir()
	root := scenariotest.ModuleRoot(t)
	// Each program is built once, before the jobs run (several record it).
	for _, name := range []string{"anysource-assume", "anysource-last-sender", "probe-race", "anysource-race", "master-worker", "probe-race-fixed", "anysource-irecv-pair"} {
		build := exec.Command("mpicc", "-g", "-O0", "-o", filepath.Join(dir, name), "testdata/mpi/"+name+".c")
		build.Dir = root // sites read testdata/mpi/NAME.c
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("mpicc %s: %v\n%s", name, err, out)
		}
	}
	// check records one job and runs check's battery with re-runs on it.
	// The jobs are independent (a trace, segments and re-runs of their
	// own): subtests run mpiJobs at a time.
	check := func(t *testing.T, name string, ranks int, args ...string) *replay.Report {
		t.Helper()
		exe := filepath.Join(dir, name)
		out := filepath.Join(t.TempDir(), name+".db")
		sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{Program: exe, Args: args, Ranks: ranks, Output: out,
			HangTimeout: 10 * time.Second, Stdout: io.Discard, Stderr: io.Discard})
		if err != nil || !sum.Clean() {
			t.Fatalf("record %s: %v\n%s", name, err, sum.Text())
		}
		tr, err := replay.OpenTrace(out)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		rerun, why := recorder.Rerunner(context.Background(), tr)
		if rerun == nil {
			t.Fatalf("%s cannot be re-run: %s", name, why)
		}
		rep, err := replay.CheckTrace(tr, replay.CheckOptions{Rerun: rerun})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	var jobs []testjobs.Job

	// The first receive as MPI_Recv, then as the start of a persistent
	// receive (the shim counts persistent starts among the receives from
	// MPI_ANY_SOURCE, and pins one through a receive that stands in for it).
	for _, c := range []struct{ arg, marker string }{{"", "recv-any"}, {"persistent", "start-any"}} {
		jobs = append(jobs, testjobs.Job{Name: "anysource-assume/" + c.marker, F: func(t *testing.T) {
			var args []string
			if c.arg != "" {
				args = []string{c.arg}
			}
			rep := check(t, "anysource-assume", 3, args...)
			line := scenariotest.MPICulprit(t, root, "anysource-assume", c.marker)
			var race *verdict.Finding
			for i := range rep.Findings {
				if rep.Findings[i].Kind == verdict.MessageRace && rep.Findings[i].Ops[0].Site == line {
					race = &rep.Findings[i]
				}
			}
			if race == nil || race.Ranks[0] != 0 ||
				!strings.Contains(race.Message, "re-run with this match forced, the program failed") || !strings.Contains(race.Message, "MPI_Abort") {
				t.Fatalf("%s: want a message-race at %s with the re-run's evidence:\n%s", c.arg, line, rep.Text())
			}
		}})
	}

	// Senders of one line: the pair's first re-run pins the first receive
	// to rank 2 (2, 1, 3: clean); the next sender's, to rank 3, aborts.
	jobs = append(jobs, testjobs.Job{Name: "anysource-last-sender", F: func(t *testing.T) {
		rep := check(t, "anysource-last-sender", 4)
		line := scenariotest.MPICulprit(t, root, "anysource-last-sender", "recv-any")
		send := scenariotest.MPICulprit(t, root, "anysource-last-sender", "send")
		var race *verdict.Finding
		for i := range rep.Findings {
			if f := &rep.Findings[i]; f.Kind == verdict.MessageRace && f.Ops[0].Site == line {
				race = f
			}
		}
		if race == nil || race.Ranks[0] != 0 || !slices.Equal(sites(race), []string{line, send}) ||
			!strings.Contains(race.Message, "re-run with this match forced, the program failed") || !strings.Contains(race.Message, "MPI_Abort") {
			t.Fatalf("want a message-race at %s with the re-run's abort as evidence:\n%s", line, rep.Text())
		}
		if len(rep.Notes) != 0 {
			t.Errorf("a receive whose re-run failed gets no note: %q", rep.Notes)
		}
	}})

	// A probe from MPI_ANY_SOURCE is pinned the same way (the shim counts it
	// among the calls from MPI_ANY_SOURCE): probe-race receives the probed
	// message into a buffer sized for rank 1's; pinned to rank 2 it is
	// truncated and the job aborts. MPI_Probe, then a loop of MPI_Iprobe
	// (the one that found the message is pinned), then the matched probes:
	// MPI_Mprobe + MPI_Mrecv, a loop of MPI_Improbe + MPI_Imrecv (the shim
	// counts and pins them as MPI_Probe and MPI_Iprobe; the trace holds them
	// as those, recorder/mpi/mprobe.go).
	send := scenariotest.MPICulprit(t, root, "probe-race", "send")
	for _, c := range []struct{ arg, marker, op string }{{"", "probe-any", "Probe"}, {"iprobe", "iprobe-any", "Iprobe"},
		{"mprobe", "mprobe-any", "Probe"}, {"improbe", "improbe-any", "Iprobe"}} {
		jobs = append(jobs, testjobs.Job{Name: "probe-race/" + c.marker, F: func(t *testing.T) {
			var args []string
			if c.arg != "" {
				args = []string{c.arg}
			}
			rep := check(t, "probe-race", 3, args...)
			probe := scenariotest.MPICulprit(t, root, "probe-race", c.marker)
			var race *verdict.Finding
			for i := range rep.Findings {
				if f := &rep.Findings[i]; f.Kind == verdict.MessageRace {
					if race != nil {
						t.Fatalf("probe-race %s: two message races:\n%s", c.arg, rep.Text())
					}
					race = f
				}
			}
			if race == nil || !slices.Equal(race.Ranks, []int{0, 1, 2}) || race.Ops[0].Site != probe || race.Ops[0].Op != c.op ||
				!slices.Equal(sites(race), []string{probe, send}) ||
				!strings.Contains(race.Message, "re-run with this match forced, the program failed") || !strings.Contains(race.Message, "MPI_ERR_TRUNCATE") {
				t.Fatalf("probe-race %s: want a message-race of ranks [0 1 2] at the %s %s (and the sends %s) with the re-run's truncation as evidence:\n%s", c.arg, c.op, probe, send, rep.Text())
			}
		}})
	}

	for _, name := range []string{"anysource-race", "master-worker", "probe-race-fixed", "anysource-irecv-pair"} {
		jobs = append(jobs, testjobs.Job{Name: name, F: func(t *testing.T) {
			ranks := map[string]int{"anysource-race": 3, "master-worker": 4, "probe-race-fixed": 3, "anysource-irecv-pair": 3}[name]
			rep := check(t, name, ranks)
			if len(rep.Findings) != 0 || len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "all clean") {
				t.Fatalf("%s, correct with MPI_ANY_SOURCE: want no findings and a note that its re-runs were clean:\n%s", name, rep.Text())
			}
		}})
	}
	testjobs.Run(t, mpiJobs, jobs)
}

// sites is the distinct, sorted sites of f's ops.
func sites(f *verdict.Finding) []string {
	var out []string
	for _, o := range f.Ops {
		if o.Site != "" && !slices.Contains(out, o.Site) {
			out = append(out, o.Site)
		}
	}
	slices.Sort(out)
	return out
}
