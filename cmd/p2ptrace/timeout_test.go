package main

import (
	"github.com/p2ptrace/p2ptrace/verdict"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestRecordTimeoutEndsSpinningProgram: `record --timeout` of a program
// whose rank spins in its own code after a call ends within the timeout with
// a no-progress finding naming the rank and that call's line (the program's
// runtime reports it), and of a program that spins after gpu.Launch returned
// by killing it; no process of either is left.
func TestRecordTimeoutEndsSpinningProgram(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	line := "testdata/spin/main.go:" + strconv.Itoa(scenariotest.MarkerLine(t, "testdata/spin/main.go", "last"))

	out := filepath.Join(dir, "spin.db")
	start := time.Now()
	code, stdout, stderr := runCmd(t, "record", "--timeout", "2s", "-o", out, "./testdata/spin")
	if code != exitFindings {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFindings, stdout, stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("record took %v", d)
	}
	for _, want := range []string{
		"status hung",
		"[1] no-progress (cause: program)\n    the run did not end within 2s: rank 0 runs code of its own",
		"its last runtime call was Compute at " + line,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in:\n%s", want, stdout)
		}
	}
	noSpinLeft(t)

	out = filepath.Join(dir, "after.db")
	code, stdout, stderr = runCmd(t, "record", "--timeout", "1s", "-o", out, "./testdata/spin", "-where", "after")
	if code != exitFindings || !strings.Contains(stdout, "no-progress (cause: program)\n    the program did not end within --timeout 1s (+3s): p2ptrace record killed its process group") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r, err := trace.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Header(); len(h.Findings) == 0 || h.Findings[len(h.Findings)-1].Kind != verdict.NoProgress {
		t.Errorf("trace header findings %+v lack the no-progress finding", h.Findings)
	}
	r.Close()
	noSpinLeft(t)
}

// noSpinLeft fails if a process of a spin binary built by record is alive.
func noSpinLeft(t *testing.T) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		exe, _, _ := strings.Cut(string(b), "\x00")
		if strings.Contains(exe, "p2ptrace-build-") && strings.HasSuffix(exe, "/spin") {
			t.Errorf("a spin process is left: %s %q", p, exe)
		}
	}
}

// TestRecordPollingLivelockIsHang: `record` of testdata/train/poll-livelock
// (rank 0 polls Test for a tag rank 1 never sends) ends within seconds, the
// trace hung, with a hang naming the poll's line; --poll-limit reaches the
// program.
func TestRecordPollingLivelockIsHang(t *testing.T) {
	t.Parallel()
	root := scenariotest.ModuleRoot(t)
	test := scenariotest.Culprit(t, root, "poll-livelock", "test")
	for _, limit := range []string{"", "10"} {
		out := filepath.Join(t.TempDir(), "poll.db")
		args := []string{"record", "-o", out}
		if limit != "" {
			args = append(args, "--poll-limit", limit)
		}
		start := time.Now()
		code, stdout, stderr := runCmd(t, append(args, filepath.Join(root, "testdata/train/poll-livelock"))...)
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("record took %v", d)
		}
		if code != exitFindings {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		for _, want := range []string{
			"status hung",
			"hang (cause: program)\n    no rank can progress; rank 0 polls (Test) Irecv from rank 1 tag 3 (64 bytes); rank 1 has finished",
			"rank 0 polls without success in Test at " + test,
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("poll limit %q: missing %q in:\n%s", limit, want, stdout)
			}
		}
		r, err := trace.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		polls := r.Header().RankEvents[0]
		r.Close()
		if limit == "" {
			// Replayed with a smaller limit, the hang is found within a few
			// polls of rank 0 (Irecv is op 0, then Test and Compute in
			// turn; a change of the world lets it poll once more), not at
			// the recorded run's 1000th.
			for _, cmd := range []string{"replay", "check"} {
				code, stdout, _ := runCmd(t, cmd, "--json", "--poll-limit", "5", out)
				m := regexp.MustCompile(`"seq": (\d+),\s*"op": "Test"`).FindStringSubmatch(stdout)
				// check lists the recording's own hang first (at the
				// recorded 1000th poll): the battery's, the same hang, is
				// deduplicated into it.
				if code != exitFindings || m == nil || cmd == "replay" && len(m[1]) > 2 {
					t.Errorf("%s --poll-limit 5: exit %d:\n%s", cmd, code, stdout)
				}
			}
		}
		// Irecv, the polls and their Computes (post and done each).
		if limit == "10" && polls > 4*(10+2) {
			t.Errorf("--poll-limit 10: rank 0 wrote %d events", polls)
		}
	}
}

func TestRecordTimeoutFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "--timeout", "-1s", "./prog"}, "--timeout -1s: want a positive duration"},
		{[]string{"record", "-n", "2", "--timeout", "-3s", "./prog"}, "--timeout -3s: want a positive duration"},
		{[]string{"record", "-n", "2", "--poll-limit", "3", "./prog"}, "--poll-limit applies to programs on package gpu"},
	} {
		code, _, stderr := runCmd(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
