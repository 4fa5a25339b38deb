package replay_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
	"github.com/p2ptrace/p2ptrace/internal/testjobs"
	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/replay"
)

// mpiJobs is how many MPI jobs the verdict test runs at once. A job mostly
// waits (launcher startup, the hang timeout of the hung ones: their ranks
// yield), so more jobs than the 2 cores of CI run at once: with 2 the test
// used under half of one core.
const mpiJobs = 4

// TestMPIScenarioVerdicts records every program of testdata/mpi under real
// Open MPI with `record -n` (the shim preloaded into every rank) and checks
// the verdicts of internal/scenariotest.MPIScenarios: the trace status and
// what the recording reported (kind, ranks, the C source lines), then what
// check finds (every finding, as a set: kind, ranks, file:line).
func TestMPIScenarioVerdicts(t *testing.T) {
	mpitest.RequireMPI(t)
	t.Parallel()
	root := scenariotest.ModuleRoot(t)
	bin := scenariotest.BuildMPI(t, root)
	dir := t.TempDir()
	// The hung scenarios first: each waits out the hang timeout.
	scenarios := slices.Clone(scenariotest.MPIScenarios)
	slices.SortStableFunc(scenarios, func(a, b scenariotest.MPIScenario) int {
		return cmp.Compare(hungFirst(a), hungFirst(b))
	})
	t.Run("scenarios", func(t *testing.T) {
		var jobs []testjobs.Job
		for _, s := range scenarios {
			jobs = append(jobs, testjobs.Job{Name: s.ID(), F: func(t *testing.T) {
				tr, sum := recordMPI(t, root, bin, dir, s)
				checkRecordVerdict(t, root, s, sum)
				checkCheckVerdicts(t, root, s, tr)
			}})
		}
		testjobs.Run(t, mpiJobs, jobs)
	})
}

// hungFirst orders the scenarios whose recording hangs before the others.
func hungFirst(s scenariotest.MPIScenario) int {
	if s.Record.Status == scenariotest.StatusHung {
		return 0
	}
	return 1
}

// recordMPI records scenario s with sites relative to the module root.
func recordMPI(t *testing.T, root, bin, dir string, s scenariotest.MPIScenario) (*replay.Trace, *recorder.Summary) {
	t.Helper()
	out := filepath.Join(dir, s.ID()+".db")
	var stderr bytes.Buffer
	sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{
		Program: filepath.Join(bin, s.Name), Args: s.Args, Ranks: s.Ranks, Output: out, Force: true,
		// Polling ranks yield, so that two jobs of up to 4 ranks share 2 cores.
		MPIArgs: []string{"--mca", "mpi_yield_when_idle", "1"},
		// The default hang timeout: with 2 s, comm-split's four ranks sat
		// in MPI_Comm_split for 2 s on a loaded 2-core machine (twice,
		// under go test -race ./...) and the job was called hung.
		HangTimeout: recorder.DefaultHangTimeout,
		Stdout:      &bytes.Buffer{}, Stderr: &stderr,
	})
	if err != nil && !errors.Is(err, recorder.ErrProgramFailed) {
		t.Fatalf("record -n %d %s: %v\n%s", s.Ranks, s.ID(), err, stderr.String())
	}
	if sum == nil {
		t.Fatalf("record %s: no summary (%v)", s.ID(), err)
	}
	tr, err := replay.OpenTrace(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr, sum
}

// checkRecordVerdict: the status, and a finding of the recording named with
// its kind, ranks and lines in the trace's message; a finding of another
// kind must be one that check finds too, or one of RecordAlso.
func checkRecordVerdict(t *testing.T, root string, s scenariotest.MPIScenario, sum *recorder.Summary) {
	t.Helper()
	v := s.Record
	h := sum.Header
	if string(h.Status) != v.Status {
		t.Fatalf("record: status %q, want %q; message:\n%s", h.Status, v.Status, h.Message)
	}
	if !strings.HasPrefix(h.Backend, "Open MPI") {
		t.Errorf("record: backend %q, want the MPI library's name and version", h.Backend)
	}
	// A communicator the recording saw made names the call and its line
	// (the legend of reports that name the communicator says it).
	for _, c := range h.Comms {
		if c.Call != "" && !strings.HasPrefix(c.Site, "testdata/mpi/"+s.Name+".c:") {
			t.Errorf("record: comm %d made by %s at %q, want a line of testdata/mpi/%s.c", c.ID, c.Call, c.Site, s.Name)
		}
	}
	// The recording's own findings, structured: the union of the ranks and
	// lines of its findings of the verdict's kind (an abort is a crash).
	kind := v.Kind
	if kind == "" && v.Status == scenariotest.StatusCrashed {
		kind = verdict.Crash
	}
	if kind == "" {
		if len(h.Findings) > 0 {
			t.Fatalf("record: a clean run reported:\n%s", sum.Text())
		}
		return
	}
	var ranks []int
	var lines []string
	also := make([]bool, len(s.RecordAlso))
	for _, f := range h.Findings {
		if f.Kind != kind {
			// One bug, one finding: another kind is a bug of its own,
			// which check finds as well or the scenario names (an MPI
			// error that a mismatched collective caused is folded into
			// the mismatch, not another finding).
			same := func(v scenariotest.MPIVerdict) bool {
				return v.Kind == f.Kind && v.MatchRanks(f.Ranks) && slices.Equal(findingLines(f), markerLines(t, root, s.Name, v.Markers))
			}
			if i := slices.IndexFunc(s.RecordAlso, same); i >= 0 {
				also[i] = true
			} else if !slices.ContainsFunc(s.Check, same) {
				t.Errorf("record: a %s finding the scenario does not expect:\n%s", f.Kind, sum.Text())
			}
			continue
		}
		ranks = append(ranks, f.Ranks...)
		lines = append(lines, findingLines(f)...)
	}
	slices.Sort(ranks)
	slices.Sort(lines)
	want := slices.Sorted(slices.Values(v.Ranks))
	if ranks = slices.Compact(ranks); !slices.Equal(ranks, slices.Compact(want)) {
		t.Errorf("record: %s findings name ranks %v, want %v:\n%s", kind, ranks, want, sum.Text())
	}
	if lines = slices.Compact(lines); !slices.Equal(lines, markerLines(t, root, s.Name, v.Markers)) {
		t.Errorf("record: %s findings name lines %v, want %v:\n%s", kind, lines, markerLines(t, root, s.Name, v.Markers), sum.Text())
	}
	for i, v := range s.RecordAlso {
		if !also[i] {
			t.Errorf("record: missing %s ranks %v at %v:\n%s", v.Kind, v.Ranks, markerLines(t, root, s.Name, v.Markers), sum.Text())
		}
	}
}

// checkCheckVerdicts: check's findings and the scenario's, as sets; a
// crashed trace too (what the replays add to the recording's findings).
func checkCheckVerdicts(t *testing.T, root string, s scenariotest.MPIScenario, tr *replay.Trace) {
	t.Helper()
	res, err := replay.Check(tr.Open, tr.Config(), tr.Site, replay.CheckOptions{})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	matched := make([]bool, len(s.Check))
	var extra []string
	recorded := tr.Recorded()
	for _, f := range res.Findings {
		sites := findingLines(f)
		i := slices.IndexFunc(s.Check, func(v scenariotest.MPIVerdict) bool {
			return v.Kind == f.Kind && v.MatchRanks(f.Ranks) && slices.Equal(sites, markerLines(t, root, s.Name, v.Markers))
		})
		if i < 0 && slices.ContainsFunc(recorded, func(rec replay.Finding) bool { return rec.Signature() == f.Signature() }) {
			// The recording's finding again (a replay whose timing shows
			// what the merge found from the run's synchronization): check
			// lists it once, as the recording's (CheckTrace).
			continue
		}
		if i < 0 {
			extra = append(extra, fmt.Sprintf("%s ranks %v at %v (under %q)", f.Kind, f.Ranks, sites, f.RevealedBy))
			continue
		}
		matched[i] = true
	}
	for i, v := range s.Check {
		if !matched[i] {
			t.Errorf("check: missing %s ranks %v at %v", v.Kind, v.Ranks, markerLines(t, root, s.Name, v.Markers))
		}
	}
	if len(extra) > 0 {
		t.Errorf("check: unexpected findings:\n  %s", strings.Join(extra, "\n  "))
	}

	// A communicator the findings name by id is one the trace knows the
	// members of, so that check lists them under its findings.
	h := tr.Header()
	rep := replay.Report{Findings: res.Findings, Comms: h.NamedComms(res.Findings)}
	text := rep.Text()
	for _, m := range regexp.MustCompile(`comm (\d+)\b`).FindAllStringSubmatch(text, -1) {
		if !strings.Contains(text, "\n    comm "+m[1]+": ranks ") {
			t.Errorf("check names comm %s and does not say who its members are (the trace's comms: %v):\n%s", m[1], h.Comms, text)
		}
	}
}

// findingLines is the distinct, sorted file:line of a finding's ops in the
// program's source (the lines of other ops, such as a Wait, are left out
// only when they carry no site).
func findingLines(f replay.Finding) []string {
	var lines []string
	for _, o := range f.Ops {
		if o.Site != "" && !slices.Contains(lines, o.Site) {
			lines = append(lines, o.Site)
		}
	}
	slices.Sort(lines)
	return lines
}

func markerLines(t *testing.T, root, name string, markers []string) []string {
	var lines []string
	for _, m := range markers {
		if l := scenariotest.MPICulprit(t, root, name, m); !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	slices.Sort(lines)
	return lines
}
