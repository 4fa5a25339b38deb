package scenariotest

import (
	"github.com/p2ptrace/p2ptrace/verdict"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
)

var knownKinds = []verdict.Kind{
	verdict.Deadlock, verdict.Hang, verdict.UnmatchedSend, verdict.Truncation, verdict.TypeMismatch, verdict.CountMismatch,
	verdict.CorruptedData, verdict.InFlightMutation, verdict.MissingWait, verdict.ReadyWithoutRecv, verdict.MessageRace,
	verdict.UnsafeBuffering, verdict.InvalidCall, verdict.BufferOverlap, verdict.RequestLeak, verdict.RecvBufferWrite,
	verdict.BsendBuffer,
	verdict.CollectiveMismatch, verdict.RMAConflict, verdict.ResourceLeak, verdict.BufferOverrun, verdict.HostTypeMismatch,
	verdict.ReleasedBuffer,
}

// TestMPIScenarioTable checks the table against itself and the sources, and
// needs no MPI: every program has a scenario and every scenario a program,
// every marker it names is a unique "// culprit: MARKER" line of its source,
// kinds, statuses, ranks and plain outcomes are valid.
func TestMPIScenarioTable(t *testing.T) {
	root := ModuleRoot(t)
	srcs, err := filepath.Glob(filepath.Join(root, "testdata", "mpi", "*.c"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no programs under testdata/mpi: %v", err)
	}
	names := map[string]bool{}
	for _, s := range MPIScenarios {
		names[s.Name] = true
	}
	for _, src := range srcs {
		name := strings.TrimSuffix(filepath.Base(src), ".c")
		if !names[name] {
			t.Errorf("testdata/mpi/%s.c has no entry in MPIScenarios", name)
		}
		text, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(text), "/* "+name+" (") {
			t.Errorf("testdata/mpi/%s.c does not open with \"/* %s (RANKS...): what it does\"", name, name)
		}
	}
	ids := map[string]bool{}
	for _, s := range MPIScenarios {
		t.Run(s.ID(), func(t *testing.T) {
			if ids[s.ID()] {
				t.Errorf("scenario %s listed twice", s.ID())
			}
			ids[s.ID()] = true
			file := filepath.Join(root, "testdata", "mpi", s.Name+".c")
			if _, err := os.Stat(file); err != nil {
				t.Fatal(err)
			}
			if s.Ranks < 2 {
				t.Errorf("ranks %d", s.Ranks)
			}
			switch s.Plain {
			case PlainOK, PlainHang:
				if s.PlainExit != 0 {
					t.Errorf("plain %s with exit %d", s.Plain, s.PlainExit)
				}
			case PlainFail, PlainOKOrFail:
				if s.PlainExit == 0 {
					t.Errorf("plain %s without its exit status", s.Plain)
				}
			default:
				t.Errorf("plain outcome %q", s.Plain)
			}
			if s.FixOf != "" {
				if !names[s.FixOf] || s.FixOf == s.Name {
					t.Errorf("FixOf %q: no such program", s.FixOf)
				}
				if !s.Clean() || s.Record.Status != StatusComplete || s.Record.Kind != "" || s.Plain != PlainOK {
					t.Errorf("a fixed version must be clean and complete under record and check, and ok under mpirun")
				}
			}
			r := s.Record
			if s.Unchecked && (r.Status != StatusCrashed || r.Kind != verdict.InvalidCall && r.Kind != verdict.Truncation) {
				t.Errorf("unchecked: record %s %q, want crashed, invalid-call or truncation", r.Status, r.Kind)
			}
			switch r.Status {
			case StatusComplete:
				if s.Plain == PlainHang {
					t.Errorf("record complete but plain mpirun hangs")
				}
			case StatusHung:
				// (A collective mismatch hangs Open MPI: each rank waits
				// in a collective the others do not make.)
				if s.Plain != PlainHang || (r.Kind != verdict.Deadlock && r.Kind != verdict.Hang && r.Kind != verdict.CollectiveMismatch) {
					t.Errorf("record hung: plain %s, kind %q", s.Plain, r.Kind)
				}
			case StatusCrashed:
				if s.Plain != PlainFail && !(s.Unchecked && (s.Plain == PlainOK || s.Plain == PlainHang)) {
					t.Errorf("record crashed but plain mpirun %s", s.Plain)
				}
			default:
				t.Errorf("record status %q", r.Status)
			}
			if r.Kind != "" && !slices.Contains(knownKinds, r.Kind) {
				t.Errorf("record kind %q", r.Kind)
			}
			if (r.Kind != "" || r.Status == StatusCrashed) && (len(r.Ranks) == 0 || len(r.Markers) == 0) {
				t.Errorf("record %s %s names no ranks or markers", r.Status, r.Kind)
			}
			if r.Under != "" {
				t.Errorf("record with Under %q", r.Under)
			}
			verdicts := append([]MPIVerdict{r}, s.Check...)
			for i, v := range verdicts {
				if i > 0 {
					if v.Status != "" || !slices.Contains(knownKinds, v.Kind) || len(v.Ranks) == 0 || len(v.Markers) == 0 {
						t.Errorf("check verdict %+v: want no status, a known kind, ranks and markers", v)
					}
					if !slices.Contains([]string{"", "sync", "mutate", "delay"}, v.Under) {
						t.Errorf("check verdict %+v: Under %q", v, v.Under)
					}
					if v.Kind == verdict.InFlightMutation {
						t.Errorf("check verdict %+v: in-flight mutations are found by recording, not by check", v)
					}
				}
				for _, rk := range v.Ranks {
					if rk < 0 || rk >= s.Ranks {
						t.Errorf("verdict %+v names rank %d of %d", v, rk, s.Ranks)
					}
				}
				for _, m := range v.Markers {
					MarkerLine(t, file, m)
				}
			}
		})
	}
}

func TestMPIVerdictMatchRanks(t *testing.T) {
	race := MPIVerdict{Kind: verdict.MessageRace, Ranks: []int{0, 1, 2}}
	for _, c := range []struct {
		v    MPIVerdict
		got  []int
		want bool
	}{
		{race, []int{0, 1, 2}, true},
		{race, []int{0, 2, 1}, true},
		{race, []int{1, 0, 2}, false},
		{race, []int{0, 1}, false},
		{MPIVerdict{Kind: verdict.UnsafeBuffering, Ranks: []int{1, 0}}, []int{1, 0}, true},
		{MPIVerdict{Kind: verdict.UnsafeBuffering, Ranks: []int{1, 0}}, []int{0, 1}, false},
	} {
		if got := c.v.MatchRanks(c.got); got != c.want {
			t.Errorf("%s %v.MatchRanks(%v) = %v", c.v.Kind, c.v.Ranks, c.got, got)
		}
	}
}

// mpiBuild is one build of testdata/mpi shared by the tests of this package
// (mpicc takes about half a second a program), removed by TestMain.
var mpiBuild struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	mpitest.UseTestPML()
	code := m.Run()
	if mpiBuild.dir != "" {
		os.RemoveAll(mpiBuild.dir)
	}
	os.Exit(code)
}

func sharedMPIBuild(t *testing.T, root string) string {
	t.Helper()
	mpitest.RequireMPI(t)
	mpiBuild.once.Do(func() {
		mpiBuild.dir, mpiBuild.err = os.MkdirTemp("", "p2ptrace-mpi-")
		if mpiBuild.err == nil {
			mpiBuild.err = buildMPIInto(root, mpiBuild.dir)
		}
	})
	if mpiBuild.err != nil {
		t.Fatal(mpiBuild.err)
	}
	return mpiBuild.dir
}

// TestMPIProgramsBuild compiles every program of testdata/mpi with mpicc.
func TestMPIProgramsBuild(t *testing.T) {
	root := ModuleRoot(t)
	bin := sharedMPIBuild(t, root)
	for _, s := range MPIScenarios {
		if _, err := os.Stat(filepath.Join(bin, s.Name)); err != nil {
			t.Errorf("%s: %v", s.ID(), err)
		}
	}
	if got := MPICulprit(t, root, "headtohead-large", "send-a"); !strings.HasPrefix(got, "testdata/mpi/headtohead-large.c:") {
		t.Errorf("MPICulprit: %s", got)
	}
}

// plainJobs is how many mpirun jobs TestMPIProgramsPlainRun runs at once:
// ranks mostly wait (and yield, MPIEnv), so more jobs than cores is fine.
const plainJobs = 4

// TestMPIProgramsPlainRun runs every program under plain mpirun (no p2ptrace),
// plainJobs at a time, and checks what it did against Plain: ok programs
// exit 0 and print "NAME: ok", failing ones exit with PlainExit. Programs
// that hang are run only with MPI_PLAIN_HANGS=1 (each costs its timeout); a
// job is killed at its timeout, ranks included.
func TestMPIProgramsPlainRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every MPI program under mpirun; skipped with -short")
	}
	mpitest.RequireMPI(t)
	root := ModuleRoot(t)
	bin := sharedMPIBuild(t, root)
	hangs := os.Getenv("MPI_PLAIN_HANGS") == "1"
	results := make([]MPIRunResult, len(MPIScenarios))
	errs := make([]error, len(MPIScenarios))
	retried := make([]MPIRunResult, len(MPIScenarios))
	sem := make(chan struct{}, plainJobs)
	var wg sync.WaitGroup
	for i, s := range MPIScenarios {
		timeout := 30 * time.Second
		if s.Plain == PlainHang {
			if !hangs {
				continue
			}
			timeout = 5 * time.Second
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = runMPI(root, bin, s, timeout)
			if errs[i] == nil && results[i].TimedOut && s.Plain != PlainHang {
				// Open MPI 4.1's abort of one rank while the other is in
				// MPI_Finalize stalled once in a CI run (no p2ptrace in
				// this job): one more run, said in the log.
				retried[i] = results[i]
				results[i], errs[i] = runMPI(root, bin, s, timeout)
			}
		}()
	}
	wg.Wait()
	for i, s := range MPIScenarios {
		r := results[i]
		t.Run(s.ID(), func(t *testing.T) {
			if s.Plain == PlainHang && !hangs {
				t.Skip("hangs under plain mpirun; set MPI_PLAIN_HANGS=1 to check that it does")
			}
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if p := retried[i]; p.TimedOut {
				t.Logf("the first run timed out after %v (run again)\nstderr:\n%s", p.Elapsed.Round(time.Millisecond), p.Stderr)
			}
			t.Logf("%s: exit %d after %v", strings.Join(MPIRunArgs("", s)[4:], " "), r.Code, r.Elapsed.Round(time.Millisecond))
			ok := r.Code == 0 && !r.TimedOut && hasLinePrefix(r.Stdout, s.Name+": ok")
			failed := !r.TimedOut && (r.Code == s.PlainExit || mpirunCrashedAfterAbort(r)) && r.Code != 0
			var good bool
			switch s.Plain {
			case PlainOK:
				good = ok
			case PlainFail:
				good = failed
			case PlainOKOrFail:
				good = ok || failed
			case PlainHang:
				good = r.TimedOut
			}
			if !good {
				t.Errorf("want %s (exit %d); got exit %d, timed out %v after %v\nstdout:\n%s\nstderr:\n%s",
					s.Plain, s.PlainExit, r.Code, r.TimedOut, r.Elapsed.Round(time.Millisecond), r.Stdout, r.Stderr)
			}
		})
	}
}

// mpirunCrashedAfterAbort reports whether r is an MPI error that aborted
// the job, after which mpirun itself died of a signal while it finalized
// (Open MPI 4.1.4's mpirun segfaults in PMIx_server_finalize now and then
// while tearing down an aborted job): the program failed as the MPI
// standard says, only mpirun's exit status is lost. The error's own
// message can be lost too: once (a CI run) mpirun failed to unpack the
// help text the error handler sent it (an ORTE_ERROR_LOG naming
// show_help.c) and then died in orte_finalize; a job that completes sends
// no help text.
func mpirunCrashedAfterAbort(r MPIRunResult) bool {
	reported := strings.Contains(r.Stderr, "*** An error occurred in") ||
		(strings.Contains(r.Stderr, "ORTE_ERROR_LOG") && strings.Contains(r.Stderr, "show_help.c"))
	return r.Code < 0 && !r.TimedOut && reported && strings.Contains(r.Stderr, "orte_finalize")
}

func hasLinePrefix(text, prefix string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// TestRunMPIEndsHungJob runs a job that hangs (recv-recv) into a short
// timeout and checks that no process of it is left: the ranks run in process
// groups of their own, so this is the session sweep at work.
func TestRunMPIEndsHungJob(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mpirun; skipped with -short")
	}
	mpitest.RequireMPI(t)
	root := ModuleRoot(t)
	bin := sharedMPIBuild(t, root)
	i := slices.IndexFunc(MPIScenarios, func(s MPIScenario) bool { return s.Name == "recv-recv" })
	r := RunMPI(t, root, bin, MPIScenarios[i], 2*time.Second)
	if !r.TimedOut {
		t.Fatalf("recv-recv ended by itself: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	prog := filepath.Join(bin, "recv-recv")
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := processesRunning(prog)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the hung job still running: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesRunning lists the pids (not zombies) whose command line starts with prog.
func processesRunning(prog string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.HasPrefix(string(cmdline), prog+"\x00") {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if j := strings.LastIndexByte(string(stat), ')'); j >= 0 && strings.HasPrefix(string(stat[j+1:]), " Z") {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// TestMPIRunCrashedAfterAbort pins which runs count as an aborted job whose
// mpirun then crashed: mpirun's segfault in orte_finalize after the MPI
// error's message, or after the help text of it failed to unpack (both
// seen in CI runs); not a segfault alone, nor a timeout.
func TestMPIRunCrashedAfterAbort(t *testing.T) {
	const finalize = "[vm:1] [ 5] /lib/x86_64-linux-gnu/libopen-rte.so.40(orte_finalize+0x5d)[0x7f]\n"
	for _, tc := range []struct {
		name string
		r    MPIRunResult
		want bool
	}{
		{"error message then crash", MPIRunResult{Code: -1, Stderr: "*** An error occurred in MPI_Recv\n" + finalize}, true},
		{"help text lost then crash", MPIRunResult{Code: -1, Stderr: "[vm:1] [[1,0],0] ORTE_ERROR_LOG: Data unpack would read past end of buffer in file ../../../orte/util/show_help.c at line 507\n" + finalize}, true},
		{"crash alone", MPIRunResult{Code: -1, Stderr: finalize}, false},
		{"exit status", MPIRunResult{Code: 4, Stderr: "*** An error occurred in MPI_Recv\n" + finalize}, false},
		{"timed out", MPIRunResult{Code: -1, TimedOut: true, Stderr: "*** An error occurred in MPI_Recv\n" + finalize}, false},
	} {
		if got := mpirunCrashedAfterAbort(tc.r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
