package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/internal/damage"
)

// EnvDamaged sets how many damaged copies TestDamagedInputs tries (default
// a few, for go test; e.g. P2PTRACE_DAMAGED=700 for the full experiment).
const EnvDamaged = "P2PTRACE_DAMAGED"

// damagedCommands are the readers every damaged file goes through.
var damagedCommands = [][]string{{"show"}, {"show", "--events"}, {"verify"}, {"export"}, {"replay"}, {"check"}}

func ringRank(iters int) func(*gpu.Rank) error {
	return func(r *gpu.Rank) error {
		n := r.Size()
		out, in := r.Alloc(gpu.Int32, 4), r.Alloc(gpu.Int32, 4)
		for range iters {
			q, err := r.Isend(out, (r.ID()+1)%n, 1)
			if err != nil {
				return err
			}
			if _, err := r.Recv(in, (r.ID()+n-1)%n, 1); err != nil {
				return err
			}
			if _, err := r.Wait(q); err != nil {
				return err
			}
		}
		return nil
	}
}

type runResult struct {
	code     int
	out, err string
	alloc    uint64
}

// runBounded runs the command line and fails the test if it takes over a
// minute (a reader that hangs).
func runBounded(t *testing.T, args ...string) runResult {
	t.Helper()
	done := make(chan runResult, 1)
	go func() {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var out, errb strings.Builder
		code := run(args, strings.NewReader(""), &out, &errb)
		runtime.ReadMemStats(&after)
		done <- runResult{code, out.String(), errb.String(), after.TotalAlloc - before.TotalAlloc}
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(time.Minute):
		t.Fatalf("%v hangs", args)
	}
	return runResult{}
}

// TestDamagedInputs runs every reader on damaged copies of a sound trace
// (cut, bit-flipped, pages zeroed, overwritten or swapped, drawn with a
// fixed seed), on crafted files (headers that lie with a valid checksum,
// ops no call can have) and on special files. Each run must either be
// refused (exit 2, one line "p2ptrace: ..." naming the file) or print
// exactly what the sound trace prints; none may hang, panic or allocate
// more than a small multiple of what the sound trace takes.
func TestDamagedInputs(t *testing.T) {
	t.Parallel()
	n := 12
	if v := os.Getenv(EnvDamaged); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatalf("%s=%q: %v", EnvDamaged, v, err)
		}
	}
	sound := recordInProcess(t, "ring", 3, ringRank(600))
	b, err := os.ReadFile(sound)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Outputs name the file: every input is written to the same path.
	path := filepath.Join(dir, "t.p2ptrace")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]runResult{}
	var maxAlloc uint64
	for _, args := range damagedCommands {
		r := runBounded(t, append(args, path)...)
		if r.code == 2 {
			t.Fatalf("%v of the sound trace: exit 2\n%s", args, r.err)
		}
		want[strings.Join(args, " ")] = r
		maxAlloc = max(maxAlloc, r.alloc)
	}
	limit := 4*maxAlloc + 32<<20

	cases := damage.Mutations(b, 15, n)
	cases = append(cases, crafted(t, b)...)
	refused, same := 0, 0
	for _, c := range cases {
		os.Remove(path)
		if err := os.WriteFile(path, c.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range damagedCommands {
			key := strings.Join(args, " ")
			r := runBounded(t, append(args, path)...)
			switch w := want[key]; {
			case r.code == 2 && refusal(r.err, path):
				refused++
			case r.code == w.code && r.out == w.out && r.err == w.err:
				same++
			default:
				t.Errorf("%s: %s: exit %d (sound: %d)\nstdout %.300q\nstderr %.300q", c.Name, key, r.code, w.code, r.out, r.err)
			}
			if r.alloc > limit {
				t.Errorf("%s: %s: allocated %d bytes (the sound trace: at most %d)", c.Name, key, r.alloc, maxAlloc)
			}
		}
	}
	t.Logf("%d inputs x %d commands: %d refused, %d as the sound trace", len(cases), len(damagedCommands), refused, same)

	// Special files, refused at once.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, special := range []string{fifo, "/dev/zero", dir} {
		for _, args := range damagedCommands {
			r := runBounded(t, append(args, special)...)
			if r.code != 2 || !strings.Contains(r.err, special+": not a regular file (it is a ") {
				t.Errorf("%v %s: exit %d, stderr %q", args, special, r.code, r.err)
			}
		}
	}
}

// crafted returns traces whose structure is sound but whose contents lie:
// headers (with valid checksums) claiming millions of ranks, events filed
// under rank 16,777,215. (Ops no call can have: TestInvalidOpFields.)
func crafted(t *testing.T, sound []byte) []damage.Case {
	t.Helper()
	dir := t.TempDir()
	var out []damage.Case
	add := func(name string, f func(path string) error) {
		path := filepath.Join(dir, fmt.Sprint(len(out)))
		if err := os.WriteFile(path, sound, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f(path); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, damage.Case{Name: name, Data: b})
	}
	header := func(js string) func(string) error {
		return func(path string) error { return damage.SetHeaderJSON(path, js) }
	}
	add("16,777,215 ranks, complete", header(`{"format_version":1,"ranks":16777215,"status":"complete","events":0,"rank_events":[0,0,0]}`))
	add("16,777,215 ranks, running", header(`{"format_version":1,"ranks":16777215,"status":"running"}`))
	add("events of rank 16,777,215", func(path string) error {
		return damage.AddRankBlock(path, 16777215, []byte("not a block"))
	})
	add("negative world size", header(`{"format_version":1,"ranks":-3,"status":"running"}`))
	add("header not JSON", header(`{"format_version":1,"ranks":`))
	return out
}

// refusal reports whether stderr is a clean refusal of the trace at path:
// one line naming it, after, for a trace cut short, the line that says it
// replays what is there (a cut trace can be damaged too).
func refusal(stderr, path string) bool {
	note := "p2ptrace: " + path + " is incomplete: the recording was cut short; replaying what is there\n"
	stderr = strings.TrimPrefix(stderr, note)
	return strings.HasPrefix(stderr, "p2ptrace: ") && strings.Count(stderr, "\n") == 1 &&
		strings.Contains(stderr, path) && !strings.Contains(stderr, "goroutine")
}
