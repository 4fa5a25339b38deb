package gpu_test

// Scenario tests: every program under testdata/train (one per row of
// SCENARIOS.md, plus ring) is built once per test run, run as a binary from the module
// root, and its outcome checked against the "record (no faults)" column:
// exit status, finding kind, ranks, and the file:line of each culprit op,
// found through the "// culprit: NAME" markers in the program's source.
// In-process tests run the same patterns through gpu.Launch directly.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// moduleRoot walks up from the test's working directory to go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

// buildScenarios builds every program under testdata/train into a
// temporary folder (one go build for all) and returns the folder.
func buildScenarios(t *testing.T, root string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "testdata", "train"))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, e := range entries {
		if e.IsDir() {
			args = append(args, "./testdata/train/"+e.Name())
		}
	}
	if len(args) < 4 {
		t.Fatal("no programs under testdata/train")
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// culprit returns "testdata/train/NAME/main.go:LINE" for the line of the
// program's source marked "// culprit: MARKER".
func culprit(t *testing.T, root, name, marker string) string {
	t.Helper()
	rel := "testdata/train/" + name + "/main.go"
	return rel + ":" + fmt.Sprint(markerLine(t, filepath.Join(root, rel), marker))
}

// markerLine is the line number of the unique line of file ending in "// culprit: MARKER".
func markerLine(t *testing.T, file, marker string) int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := "// culprit: " + marker
	found := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.HasSuffix(strings.TrimSpace(sc.Text()), want) {
			if found != 0 {
				t.Fatalf("%s: marker %q on lines %d and %d", file, marker, found, n)
			}
			found = n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatalf("%s: no line marked %q", file, want)
	}
	return found
}

type scenarioRun struct {
	code           int
	stdout, stderr string
}

// runScenario runs the binary of a program with cwd = the module root, under a timeout.
func runScenario(t *testing.T, root, bin, name string, args ...string) scenarioRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "P2PTRACE_") { // never record by accident
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v: still running after 20s (the runtime did not detect a hang?)\nstderr:\n%s", name, args, stderr.String())
	}
	run := scenarioRun{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return run
}

// scenario is one expected outcome of a program run without faults.
type scenario struct {
	name string
	args []string
	// clean: exit 0 with stdout starting with "NAME: ok" and nothing on stderr.
	clean bool
	// Otherwise exit 1; the first stderr line starts with
	// "p2ptrace train NAME: " + head, and lines holds, in order, lines that
	// must appear exactly (after trimming); {marker} is replaced by the
	// culprit's file:line.
	head  string
	lines []string
	// kinds lists every finding kind the report must contain, once each
	// per entry (a finding starts a line with "KIND: ").
	kinds []string
}

func TestScenarioPrograms(t *testing.T) {
	cases := []scenario{
		{name: "pingpong", clean: true},
		{name: "headtohead-small", clean: true},
		{name: "headtohead-large",
			head: "deadlock: no rank can progress; wait-for cycle: rank 0 -> rank 1 -> rank 0",
			lines: []string{
				"rank 0 blocked in Send to rank 1 tag 0 (4194304 bytes) at {send-a}",
				"rank 1 blocked in Send to rank 0 tag 0 (4194304 bytes) at {send-b}",
			},
			kinds: []string{"deadlock"}},
		{name: "ordered-exchange", clean: true},
		{name: "sendrecv-exchange", clean: true},
		{name: "wrong-rank",
			head: "hang: no rank can progress; rank 1 waits on rank 0, which has finished",
			lines: []string{
				"rank 1 blocked in Recv from rank 0 tag 0 (4096 bytes) at {recv}",
				"nearest candidate: rank 0 sent tag 0 to rank 2, not to rank 1; rank 1 waits for Recv from rank 0 tag 0 (4096 bytes)",
			},
			kinds: []string{"hang"}},
		{name: "wrong-tag",
			head: "hang: no rank can progress; rank 1 waits on rank 0, which has finished",
			lines: []string{
				"rank 1 blocked in Recv from rank 0 tag 1 (4096 bytes) at {recv}",
				"nearest candidate: rank 0 sent tag 0 to rank 1; rank 1 waits for Recv from rank 0 tag 1 (4096 bytes)",
			},
			kinds: []string{"hang"}},
		{name: "send-no-recv",
			head: "hang: no rank can progress; rank 0 waits on rank 1, which has finished",
			lines: []string{
				"rank 0 blocked in Send to rank 1 tag 0 (4194304 bytes) at {send}",
				"nearest candidate: rank 0 sends Send to rank 1 tag 0 (4194304 bytes), but rank 1 has finished without receiving it",
			},
			kinds: []string{"hang"}},
		{name: "send-no-recv", args: []string{"-bytes", "4096"},
			head: "unmatched-send: rank 0: Send to rank 1 tag 0 (4096 bytes) was never received",
			lines: []string{
				"rank 0: Send to rank 1 tag 0 (4096 bytes) at {send}",
			},
			kinds: []string{"unmatched-send"}},
		// Without recording nothing compares the hashes at post and at
		// completion, and the rendezvous transfer (the Recv was posted
		// first) reads the buffer before the write: the program's own check
		// passes. TestScenarioInProcessIsendMutate records it.
		{name: "isend-mutate", clean: true},
		{name: "isend-nowait",
			head: "missing-wait: rank 0: request of Isend (peer 1, tag 0) completed but never waited before the rank finished",
			lines: []string{
				"rank 0: Isend to rank 1 tag 0 (4096 bytes) at {leak-isend}",
				"missing-wait: rank 1: request of Irecv (peer 0, tag 0) never completed before the rank finished",
				"rank 1: Irecv from rank 0 tag 0 (4096 bytes) at {leak-irecv}",
			},
			kinds: []string{"missing-wait", "missing-wait"}},
		{name: "isend-nowait", args: []string{"-mode", "leak"},
			head: "missing-wait: rank 0: request of Isend (peer 1, tag 0) completed but never waited before the rank finished",
			lines: []string{
				"rank 0: Isend to rank 1 tag 0 (4096 bytes) at {leak-isend}",
				"missing-wait: rank 1: request of Irecv (peer 0, tag 0) never completed before the rank finished",
				"rank 1: Irecv from rank 0 tag 0 (4096 bytes) at {leak-irecv}",
			},
			kinds: []string{"missing-wait", "missing-wait"}},
		{name: "isend-nowait", args: []string{"-mode", "free"},
			head: "missing-wait: rank 0: request of Isend (peer 1, tag 0) freed while still active",
			lines: []string{
				"rank 0: Isend to rank 1 tag 0 (4194304 bytes) at {free-isend}",
				"rank 0: Request.Free at {free}",
			},
			kinds: []string{"missing-wait"}},
		// The data lands before the early read in a plain run: the bug hides.
		{name: "irecv-read-early", clean: true},
		{name: "matrix-scatter", clean: true},
		{name: "pipeline-chunks",
			head: "missing-wait: rank 0: request of Isend (peer 1, tag 8) completed but never waited before the rank finished",
			lines: []string{
				"rank 0: Isend to rank 1 tag 8 (65536 bytes) at {isend}",
				"missing-wait: rank 0: request of Isend (peer 1, tag 9) completed but never waited before the rank finished",
				"rank 0: Isend to rank 1 tag 9 (65536 bytes) at {isend}",
			},
			kinds: []string{"missing-wait", "missing-wait"}},
		{name: "pipeline-chunks", args: []string{"-chunks", "10"},
			head: "missing-wait: rank 0: request of Isend (peer 1, tag 8) completed but never waited before the rank finished",
			lines: []string{
				"rank 0: Isend to rank 1 tag 8 (65536 bytes) at {isend}",
				"missing-wait: rank 0: request of Isend (peer 1, tag 9) completed but never waited before the rank finished",
				"rank 0: Isend to rank 1 tag 9 (65536 bytes) at {isend}",
			},
			kinds: []string{"missing-wait", "missing-wait"}},
		{name: "pipeline-chunks", args: []string{"-chunks", "8"}, clean: true},
		{name: "pipeline-chunks", args: []string{"-chunks", "4"}, clean: true},
		{name: "anysource-race", clean: true},
		// SCENARIOS.md says "hang at Synchronize"; the runtime finds the
		// wait-for cycle between the two streams and calls it a deadlock.
		{name: "nccl-headtohead",
			head: "deadlock: no rank can progress; wait-for cycle: rank 0 -> rank 1 -> rank 0",
			lines: []string{
				"rank 0 blocked in Stream.Synchronize at {sync}",
				"waiting for Stream.Send to rank 1 (4096 bytes) at {send}",
				"rank 1 blocked in Stream.Synchronize at {sync}",
				"waiting for Stream.Send to rank 0 (4096 bytes) at {send}",
			},
			kinds: []string{"deadlock"}},
		{name: "nccl-headtohead", args: []string{"-n", "1048576"},
			head: "deadlock: no rank can progress; wait-for cycle: rank 0 -> rank 1 -> rank 0",
			lines: []string{
				"rank 0 blocked in Stream.Synchronize at {sync}",
				"waiting for Stream.Send to rank 1 (4194304 bytes) at {send}",
				"rank 1 blocked in Stream.Synchronize at {sync}",
				"waiting for Stream.Send to rank 0 (4194304 bytes) at {send}",
			},
			kinds: []string{"deadlock"}},
		{name: "nccl-group", clean: true},
		{name: "nccl-count-mismatch",
			head: "count-mismatch: rank 0 sends 1048576 elements, rank 1 receives 524288: stream send and recv counts must agree",
			lines: []string{
				"rank 0: Stream.Send to rank 1 (4194304 bytes) at {send}",
				"rank 1: Stream.Recv from rank 0 (2097152 bytes) at {recv}",
			},
			kinds: []string{"count-mismatch"}},
		{name: "ring", clean: true},
		{name: "ring", args: []string{"-ranks", "3", "-iters", "4", "-bytes", "1048576"}, clean: true},
		{name: "ring", args: []string{"-ranks", "2", "-iters", "2", "-bytes", "4194304"}, clean: true},
	}
	root := moduleRoot(t)
	bin := buildScenarios(t, root)
	for _, c := range cases {
		t.Run(strings.Join(append([]string{c.name}, c.args...), "_"), func(t *testing.T) {
			t.Parallel()
			run := runScenario(t, root, bin, c.name, c.args...)
			if c.clean {
				if run.code != 0 || run.stderr != "" || !strings.HasPrefix(run.stdout, c.name+": ok") {
					t.Fatalf("want a clean run; exit %d\nstdout: %s\nstderr:\n%s", run.code, run.stdout, run.stderr)
				}
				return
			}
			if run.code != 1 || run.stdout != "" {
				t.Fatalf("want exit 1 and no stdout; exit %d\nstdout: %s\nstderr:\n%s", run.code, run.stdout, run.stderr)
			}
			prefix := "p2ptrace train " + c.name + ": "
			first, _, _ := strings.Cut(run.stderr, "\n")
			if first != prefix+c.head {
				t.Errorf("first line:\n got %q\nwant %q", first, prefix+c.head)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSuffix(run.stderr, "\n"), "\n")[1:] {
				got = append(got, strings.TrimSpace(l))
			}
			var want []string
			for _, l := range c.lines {
				for {
					i := strings.Index(l, "{")
					if i < 0 {
						break
					}
					j := strings.Index(l[i:], "}") + i
					l = l[:i] + culprit(t, root, c.name, l[i+1:j]) + l[j+1:]
				}
				want = append(want, l)
			}
			if !slices.Equal(got, want) {
				t.Errorf("report lines after the first:\n got %q\nwant %q\nstderr:\n%s", got, want, run.stderr)
			}
			var kinds []string
			for _, l := range strings.Split(strings.TrimPrefix(run.stderr, prefix), "\n") {
				if k, _, ok := strings.Cut(l, ": "); ok && !strings.HasPrefix(l, " ") && !strings.Contains(k, " ") {
					kinds = append(kinds, k)
				}
			}
			if !slices.Equal(kinds, c.kinds) {
				t.Errorf("finding kinds %q, want %q\nstderr:\n%s", kinds, c.kinds, run.stderr)
			}
		})
	}
}
