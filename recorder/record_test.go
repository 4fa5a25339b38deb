package recorder_test

import (
	"context"
	"errors"
	"github.com/p2ptrace/p2ptrace/verdict"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

type fixture struct {
	root, bin, dir string
}

func newFixture(t *testing.T) *fixture {
	root := scenariotest.ModuleRoot(t)
	return &fixture{root: root, bin: scenariotest.Build(t, root), dir: t.TempDir()}
}

func (f *fixture) record(t *testing.T, name string, args ...string) (*recorder.Summary, string, error) {
	t.Helper()
	out := filepath.Join(f.dir, name+".db")
	sum, err := recorder.Record(context.Background(), recorder.Options{Program: filepath.Join(f.bin, name), Args: args, Output: out, Force: true, Stdout: io.Discard, Stderr: io.Discard})
	return sum, out, err
}

func events(t *testing.T, path string) (trace.Header, [][]trace.Event, *trace.Reader) {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var all [][]trace.Event
	for rank := range r.Ranks() {
		var evs []trace.Event
		c := r.Rank(rank)
		var ev trace.Event
		for c.Next(&ev) {
			e := ev
			e.Reqs = append([]uint64(nil), ev.Reqs...)
			evs = append(evs, e)
		}
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		all = append(all, evs)
	}
	return r.Header(), all, r
}

func testRecordPingpongContents(t *testing.T, f *fixture) {
	sum, path, err := f.record(t, "pingpong")
	if err != nil || !sum.Clean() {
		t.Fatalf("%v %+v", err, sum)
	}
	hdr, evs, r := events(t, path)
	if hdr.Status != trace.StatusComplete || hdr.WorldSize != 2 || hdr.Backend != "sim" || hdr.HashMode != "full" || hdr.EagerLimit != 64<<10 {
		t.Fatalf("header %+v", hdr)
	}
	if sum.Ops != 6 || sum.Bytes != 2*4<<20 {
		t.Fatalf("summary: %d ops, %d bytes; want 6 ops (2 Send, 2 Recv, 2 Finalize), 8 MiB", sum.Ops, sum.Bytes)
	}
	// Rank 0: Send (post, done), Recv (post, done), Finalize (post, done).
	r0 := evs[0]
	if len(r0) != 6 || r0[0].Op != trace.OpSend || r0[0].Kind != trace.KindPost || r0[1].Kind != trace.KindDone || r0[2].Op != trace.OpRecv {
		t.Fatalf("rank 0 events %+v", r0)
	}
	send, sendDone := r0[0], r0[1]
	if send.HashPost == 0 || sendDone.MatchRank != 1 || sendDone.MatchSeq != 0 || sendDone.HashDone != send.HashPost {
		t.Fatalf("send post %+v done %+v", send, sendDone)
	}
	recv1Done := evs[1][1]
	if recv1Done.Op != trace.OpRecv || recv1Done.MatchRank != 0 || recv1Done.MatchSeq != 0 || recv1Done.HashDone != send.HashPost || recv1Done.Source != 0 {
		t.Fatalf("rank 1 recv done %+v", recv1Done)
	}
	site, ok := r.Site(send.Site)
	want := scenariotest.Culprit(t, f.root, "pingpong", "send")
	if !ok || site.File+":"+strconv.Itoa(site.Line) != want {
		t.Fatalf("site %+v, want %s", site, want)
	}
}

func testRecordHungRun(t *testing.T, f *fixture) {
	// The program exits 1 because of the deadlock: that is the finding, not
	// a failure of the program's own.
	sum, path, err := f.record(t, "headtohead-large")
	if err != nil || sum == nil || sum.Clean() || sum.ProgramError != "" {
		t.Fatalf("%v %+v", err, sum)
	}
	hdr, evs, _ := events(t, path)
	if hdr.Status != trace.StatusHung || len(hdr.Findings) != 1 || hdr.Findings[0].Kind != verdict.Deadlock || !slices.Equal(hdr.Findings[0].Cycle, []int{0, 1, 0}) {
		t.Fatalf("header %+v", hdr)
	}
	for rank, e := range evs {
		if len(e) != 1 || e[0].Op != trace.OpSend || e[0].Kind != trace.KindPost {
			t.Fatalf("rank %d: want just the blocked Send's post, got %+v", rank, e)
		}
	}
	if !strings.Contains(sum.Text(), "status hung") || !strings.Contains(sum.Text(), "1 finding(s) while recording\n\n[1] deadlock (cause: program)") {
		t.Fatalf("%s", sum.Text())
	}
}

func TestRecordUsageErrors(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.db")
	os.WriteFile(exists, []byte("x"), 0o644)
	cases := []struct {
		o    recorder.Options
		want string
	}{
		{recorder.Options{Program: filepath.Join(dir, "nope"), Output: filepath.Join(dir, "a.db")}, "usage: no such program: " + filepath.Join(dir, "nope")},
		{recorder.Options{Program: "/bin/true", Output: exists}, "usage: " + exists + " already exists (use --force to overwrite it)"},
		{recorder.Options{Program: "/bin/true", Output: filepath.Join(dir, "b.db"), Hash: "md5"}, `usage: --hash "md5": want full, sample or off`},
		{recorder.Options{Program: "/bin/true", Output: filepath.Join(dir, "c.db")}, "the program made no gpu calls: /bin/true ran, but wrote no trace: it must call gpu.Launch"},
	}
	for _, c := range cases {
		_, err := recorder.Record(context.Background(), c.o)
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}

func testKillMidRecordingKeepsFlushedEvents(t *testing.T, f *fixture) {
	path := filepath.Join(f.dir, "killed.db")
	cmd := exec.Command(filepath.Join(f.bin, "ring"), "-ranks", "4", "-iters", "100000000", "-bytes", "64")
	cmd.Env = append(os.Environ(), gpu.EnvTrace+"="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // several 100 ms flushes
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	sum, err := recorder.Summarize(path)
	if err != nil {
		t.Fatalf("a killed recording must stay readable: %v", err)
	}
	if !sum.Incomplete || sum.Header.Status != trace.StatusRunning || sum.Ops < 1000 {
		t.Fatalf("summary %+v", sum)
	}
	if !strings.Contains(sum.Text(), "status incomplete: the recording was cut short") {
		t.Fatalf("%s", sum.Text())
	}
}

func testInterruptFlushesAndMarksTheTrace(t *testing.T, f *fixture) {
	path := filepath.Join(f.dir, "interrupted.db")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(700 * time.Millisecond); cancel() }()
	sum, err := recorder.Record(ctx, recorder.Options{Program: filepath.Join(f.bin, "ring"), Args: []string{"-ranks", "4", "-iters", "100000000", "-bytes", "64"}, Output: path, Stdout: io.Discard, Stderr: io.Discard})
	if !errors.Is(err, recorder.ErrProgramFailed) || sum == nil {
		t.Fatalf("%v", err)
	}
	if !sum.Interrupted || sum.Header.Status != trace.StatusCrashed || !strings.Contains(sum.Header.Message, "interrupted by terminated") || sum.Ops < 1000 {
		t.Fatalf("summary %+v", sum)
	}
}

func testTwoWritersOnOneFile(t *testing.T, f *fixture) {
	path := filepath.Join(f.dir, "busy.db")
	first := exec.Command(filepath.Join(f.bin, "ring"), "-ranks", "2", "-iters", "100000000")
	first.Env = append(os.Environ(), gpu.EnvTrace+"="+path)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { first.Process.Kill(); first.Wait() }()
	time.Sleep(300 * time.Millisecond)
	second := exec.Command(filepath.Join(f.bin, "ring"), "-ranks", "2", "-iters", "1")
	second.Env = append(os.Environ(), gpu.EnvTrace+"="+path, gpu.EnvForce+"=1")
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another process") {
		t.Fatalf("second writer: %v\n%s", err, out)
	}
}

// TestRecordPrograms records the scenario programs, built once for all subtests.
func TestRecordPrograms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	t.Run("pingpong contents", func(t *testing.T) { testRecordPingpongContents(t, f) })
	t.Run("hung run", func(t *testing.T) { testRecordHungRun(t, f) })
	t.Run("payloads", func(t *testing.T) { testRecordPayloads(t, f) })
	t.Run("kill -9 keeps flushed events", func(t *testing.T) { testKillMidRecordingKeepsFlushedEvents(t, f) })
	t.Run("interrupt flushes and marks", func(t *testing.T) { testInterruptFlushesAndMarksTheTrace(t, f) })
	t.Run("two writers on one file", func(t *testing.T) { testTwoWritersOnOneFile(t, f) })
}

func testRecordPayloads(t *testing.T, f *fixture) {
	out := filepath.Join(f.dir, "payloads.db")
	_, err := recorder.Record(context.Background(), recorder.Options{Program: filepath.Join(f.bin, "wrong-tag"), Output: out, Payloads: true, Stdout: io.Discard, Stderr: io.Discard})
	if err != nil { // the program fails because of its finding: no error of its own
		t.Fatalf("%v", err)
	}
	_, evs, r := events(t, out)
	send := evs[0][0]
	if send.Op != trace.OpSend || send.HashPost == 0 {
		t.Fatalf("rank 0's first event %+v", send)
	}
	data, ok := r.Payload(send.HashPost)
	if !ok || int64(len(data)) != send.Bytes {
		t.Fatalf("payload of the send: %d bytes, ok %v; want %d", len(data), ok, send.Bytes)
	}
}

// TestRecordBuildsPackageFromAnyDirectory: a Go main package given as a
// directory is built in its own module, whatever the working directory, and
// its call sites are still named from its module root.
func TestRecordBuildsPackageFromAnyDirectory(t *testing.T) {
	prog := filepath.Join(scenariotest.ModuleRoot(t), "testdata", "train", "pingpong")
	t.Chdir(t.TempDir()) // outside any module
	out := filepath.Join(t.TempDir(), "pp.db")
	sum, err := recorder.Record(context.Background(), recorder.Options{Program: prog, Output: out, Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Header.Status != trace.StatusComplete || sum.Ops == 0 {
		t.Fatalf("summary %+v", sum)
	}
	_, _, r := events(t, out)
	sites := r.Sites()
	if len(sites) == 0 {
		t.Fatal("no call sites")
	}
	for _, site := range sites {
		if !strings.HasPrefix(site.File, "testdata/train/pingpong/") {
			t.Fatalf("site %+v: want it relative to the module root", site)
		}
	}
}

// TestRecordBuildErrorIsUsage: a directory that does not build is a usage
// error that shows the compiler's message.
func TestRecordBuildErrorIsUsage(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module broken\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { undefinedThing() }\n"), 0o644)
	_, err := recorder.Record(context.Background(), recorder.Options{Program: dir, Output: filepath.Join(t.TempDir(), "x.db")})
	if !errors.Is(err, recorder.ErrUsage) || !strings.Contains(err.Error(), "undefined: undefinedThing") {
		t.Fatalf("got %v", err)
	}
}
