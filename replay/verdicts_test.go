package replay_test

import (
	"context"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// scenarios records the scenario programs as real processes, once per test.
type scenarios struct {
	t    *testing.T
	root string
	bin  string
	dir  string
}

func newScenarios(t *testing.T) *scenarios {
	root := scenariotest.ModuleRoot(t)
	return &scenarios{t: t, root: root, bin: scenariotest.Build(t, root), dir: t.TempDir()}
}

// record runs testdata/train/NAME with args under recording and opens its trace.
func (s *scenarios) record(name string, args ...string) *replay.Trace {
	s.t.Helper()
	return s.recordWith(recorder.Options{}, name, args...)
}

// recordWith is record with recording options (payloads, eager limit...).
func (s *scenarios) recordWith(o recorder.Options, name string, args ...string) *replay.Trace {
	s.t.Helper()
	out := filepath.Join(s.dir, fmt.Sprintf("%s%s-%v-%d.db", name, strings.Join(args, ""), o.Payloads, o.Eager))
	o.Program, o.Args, o.Output, o.Force, o.Stdout, o.Stderr = filepath.Join(s.bin, name), args, out, true, io.Discard, io.Discard
	_, err := recorder.Record(context.Background(), o)
	if err != nil && !strings.Contains(err.Error(), "the program failed") {
		s.t.Fatalf("record %s: %v", name, err)
	}
	tr, err := replay.OpenTrace(out)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { tr.Close() })
	return tr
}

func (s *scenarios) line(name, marker string) string {
	return scenariotest.Culprit(s.t, s.root, name, marker)
}

func replayUnder(t *testing.T, tr *replay.Trace, seeds int, specs ...string) []replay.Finding {
	t.Helper()
	sp, err := faults.ParseAll(specs)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := replay.Explore(tr.Open, tr.Config(), tr.Site, sp, 0, seeds, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func sites(f replay.Finding) []string {
	var s []string
	for _, o := range f.Ops {
		s = append(s, o.Site)
	}
	return s
}

func wantFinding(t *testing.T, fs []replay.Finding, kind verdict.Kind, cause string, ranks []int, lines ...string) replay.Finding {
	t.Helper()
	for _, f := range fs {
		if f.Kind != kind {
			continue
		}
		if f.Cause != cause || ranks != nil && !slices.Equal(f.Ranks, ranks) {
			t.Fatalf("%s: cause %s ranks %v, want %s %v", kind, f.Cause, f.Ranks, cause, ranks)
		}
		got := sites(f)
		for _, l := range lines {
			if !slices.Contains(got, l) {
				t.Fatalf("%s: sites %v lack %s", kind, got, l)
			}
		}
		return f
	}
	t.Fatalf("no %s finding in %s", kind, kinds(fs))
	return replay.Finding{}
}

func wantClean(t *testing.T, fs []replay.Finding, under string) {
	t.Helper()
	if len(fs) != 0 {
		t.Fatalf("under %s: %s", under, kinds(fs))
	}
}

func TestScenarioVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("records every scenario program; skipped with -short")
	}
	t.Parallel()
	s := newScenarios(t)

	t.Run("pingpong", func(t *testing.T) {
		tr := s.record("pingpong")
		for _, f := range []string{"", "sync", "mutate", "delay"} {
			var specs []string
			if f != "" {
				specs = []string{f}
			}
			wantClean(t, replayUnder(t, tr, 4, specs...), f)
		}
		f := wantFinding(t, replayUnder(t, tr, 1, "drop"), "hang", "fault", []int{0, 1}, s.line("pingpong", "ping-recv"))
		if !strings.HasPrefix(f.Fault, "drop on rank 0 -> 1") {
			t.Fatalf("fault %q", f.Fault)
		}
	})
	t.Run("headtohead-small", func(t *testing.T) {
		tr := s.record("headtohead-small")
		wantClean(t, replayUnder(t, tr, 1), "none")
		fs := replayUnder(t, tr, 1, "sync")
		f := wantFinding(t, fs, "deadlock", "program", []int{0, 1}, s.line("headtohead-small", "send-a"), s.line("headtohead-small", "send-b"))
		if !strings.Contains(f.Hint, "completed only because sends were buffered") {
			t.Fatalf("hint %q", f.Hint)
		}
		wantFinding(t, fs, "unsafe-buffering", "program", []int{0, 1}, s.line("headtohead-small", "send-a"))
	})
	t.Run("headtohead-large", func(t *testing.T) {
		tr := s.record("headtohead-large")
		if tr.Header().Status != trace.StatusHung {
			t.Fatalf("status %s", tr.Header().Status)
		}
		f := wantFinding(t, replayUnder(t, tr, 1), "deadlock", "program", []int{0, 1}, s.line("headtohead-large", "send-a"), s.line("headtohead-large", "send-b"))
		if !strings.Contains(f.Hint, "Sendrecv") || !strings.Contains(f.Hint, "Isend+Irecv+Waitall") || !slices.Equal(f.Cycle, []int{0, 1, 0}) {
			t.Fatalf("%+v", f)
		}
	})
	for _, name := range []string{"ordered-exchange", "sendrecv-exchange", "matrix-scatter"} {
		t.Run(name, func(t *testing.T) {
			tr := s.record(name)
			wantClean(t, replayUnder(t, tr, 1, "sync"), "sync")
			wantClean(t, replayUnder(t, tr, 8, "delay"), "delay")
		})
	}
	t.Run("alltoall", func(t *testing.T) {
		// 11 messages each way per rank and iteration: past the short
		// queues, through the engine's matching index.
		tr := s.record("alltoall", "-ranks", "12", "-iters", "3")
		wantClean(t, replayUnder(t, tr, 1), "no faults")
		wantClean(t, replayUnder(t, tr, 1, "sync"), "sync")
		wantClean(t, replayUnder(t, tr, 8, "delay"), "delay")
	})
	t.Run("ready-send", func(t *testing.T) {
		// Only the timing posts the receive first: the recording (which
		// holds the receive back once it has run) and check report the
		// Rsend, as the hold shows it; with a barrier between, neither.
		tr := s.record("ready-send")
		rec := tr.Recorded()
		if len(rec) != 1 || rec[0].Kind != verdict.ReadyWithoutRecv || !slices.Equal(rec[0].Ranks, []int{0, 1}) ||
			rec[0].Ops[0].Site != s.line("ready-send", "rsend") || rec[0].RevealedBy != "--hold-post 1:0" ||
			!strings.Contains(rec[0].Message, "nothing orders rank 1's matching receive (Irecv at "+s.line("ready-send", "irecv")+") before it") {
			t.Fatalf("recorded %+v", rec)
		}
		wantClean(t, replayUnder(t, tr, 1), "no faults")
		rep, err := replay.CheckTrace(tr, replay.CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Findings) != 1 || rep.Findings[0].Signature() != rec[0].Signature() {
			t.Fatalf("check: %s, want the recorded finding once", kinds(rep.Findings))
		}
		fixed := s.record("ready-send", "-mode", "fixed")
		if rec := fixed.Recorded(); len(rec) != 0 {
			t.Fatalf("fixed: recorded %s", kinds(rec))
		}
		rep, err = replay.CheckTrace(fixed, replay.CheckOptions{})
		if err != nil || len(rep.Findings) != 0 {
			t.Fatalf("fixed: check %v %s", err, kinds(rep.Findings))
		}
	})
	t.Run("wrong-rank", func(t *testing.T) {
		tr := s.record("wrong-rank")
		f := wantFinding(t, replayUnder(t, tr, 1), "hang", "program", []int{1}, s.line("wrong-rank", "recv"))
		if len(f.Candidates) == 0 || !strings.Contains(f.Candidates[0], "rank 0 sent tag 0 to rank 2, not to rank 1") {
			t.Fatalf("candidates %q", f.Candidates)
		}
	})
	t.Run("wrong-tag", func(t *testing.T) {
		tr := s.record("wrong-tag")
		f := wantFinding(t, replayUnder(t, tr, 1), "hang", "program", []int{1}, s.line("wrong-tag", "recv"))
		if len(f.Candidates) == 0 || !strings.Contains(f.Candidates[0], "rank 0 sent tag 0 to rank 1; rank 1 waits for Recv from rank 0 tag 1") {
			t.Fatalf("candidates %q", f.Candidates)
		}
	})
	t.Run("send-no-recv", func(t *testing.T) {
		wantFinding(t, replayUnder(t, s.record("send-no-recv"), 1), "hang", "program", []int{0}, s.line("send-no-recv", "send"))
		wantFinding(t, replayUnder(t, s.record("send-no-recv", "-bytes", "4096"), 1), "unmatched-send", "program", []int{0, 1}, s.line("send-no-recv", "send"))
	})
	t.Run("isend-mutate", func(t *testing.T) {
		tr := s.record("isend-mutate")
		if rec := tr.Recorded(); len(rec) != 1 || rec[0].Kind != verdict.InFlightMutation || !slices.Equal(rec[0].Ranks, []int{0}) || rec[0].Ops[0].Site != s.line("isend-mutate", "isend") {
			t.Fatalf("recording did not report the in-flight mutation at the Isend: %+v", rec)
		}
		f := wantFinding(t, replayUnder(t, tr, 1, "mutate"), "corrupted-data", "program", []int{1, 0}, s.line("isend-mutate", "recv"), s.line("isend-mutate", "isend"), s.line("isend-mutate", "wait"))
		// The write is between the Isend and its Wait; 4 MiB is over the payload cap: no values.
		if !strings.Contains(f.Message, "written after the Isend at "+s.line("isend-mutate", "isend")+" and before its Wait at "+s.line("isend-mutate", "wait")) ||
			!strings.Contains(f.Message, "record with --payloads") || f.FirstDiff != nil {
			t.Fatalf("%+v", f)
		}
		// 1024 floats (4 KiB) over a 1 KiB eager limit, recorded with --payloads: the values.
		tr = s.recordWith(recorder.Options{Payloads: true, Eager: 1024}, "isend-mutate", "-n", "1024")
		f = wantFinding(t, replayUnder(t, tr, 1, "mutate"), "corrupted-data", "program", []int{1, 0}, s.line("isend-mutate", "recv"), s.line("isend-mutate", "isend"), s.line("isend-mutate", "wait"))
		if f.FirstDiff == nil || *f.FirstDiff != 0 || f.Dtype != "float32" || *f.WindowStart != 0 ||
			!slices.Equal(f.Got, []string{"-1", "1", "2", "3", "4"}) || !slices.Equal(f.Want, []string{"0", "1", "2", "3", "4"}) {
			t.Fatalf("values: first %v dtype %s got %v want %v\n%s", f.FirstDiff, f.Dtype, f.Got, f.Want, f.Message)
		}
	})
	t.Run("isend-nowait", func(t *testing.T) {
		wantFinding(t, replayUnder(t, s.record("isend-nowait", "-mode", "leak"), 1), "missing-wait", "program", []int{0}, s.line("isend-nowait", "leak-isend"))
		wantFinding(t, replayUnder(t, s.record("isend-nowait", "-mode", "free"), 1), "missing-wait", "program", []int{1}, s.line("isend-nowait", "free-irecv"))
	})
	t.Run("pipeline-chunks", func(t *testing.T) {
		wantFinding(t, replayUnder(t, s.record("pipeline-chunks"), 1), "missing-wait", "program", []int{0})
		wantClean(t, replayUnder(t, s.record("pipeline-chunks", "-chunks", "8"), 1), "none")
	})
	t.Run("anysource-race", func(t *testing.T) {
		tr := s.record("anysource-race")
		wantClean(t, replayUnder(t, tr, 1), "none")
		f := wantFinding(t, replayUnder(t, tr, 16, "delay"), "message-race", "program", nil, s.line("anysource-race", "recv-any"))
		if r := f.Ranks; len(r) != 3 || r[0] != 0 || !slices.Equal(slices.Sorted(slices.Values(r[1:])), []int{1, 2}) {
			t.Fatalf("ranks %v: want the receiver 0, then the recorded and the replayed sender", r)
		}
		// check forces the alternative match itself. The model replays it
		// cleanly, and the program is correct whatever the order: re-run
		// with the match forced, it is clean, a note and no finding.
		rerun, why := recorder.Rerunner(context.Background(), tr)
		if rerun == nil {
			t.Fatalf("the recorded program cannot be re-run: %s", why)
		}
		res, err := replay.Check(tr.Open, tr.Config(), tr.Site, replay.CheckOptions{Rerun: rerun})
		if err != nil {
			t.Fatal(err)
		}
		wantClean(t, res.Findings, "check")
		if want := "rank 0's Recv at " + s.line("anysource-race", "recv-any") + " is nondeterministic: 1 alternative(s) re-run, all clean"; !slices.Equal(res.Notes, []string{want}) {
			t.Fatalf("notes %q, want %q", res.Notes, want)
		}
		// Unconfirmed (no re-run) and --strict: the race, with both candidate sends.
		res, err = replay.Check(tr.Open, tr.Config(), tr.Site, replay.CheckOptions{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		f = wantFinding(t, res.Findings, "message-race", "program", nil, s.line("anysource-race", "recv-any"), s.line("anysource-race", "send"))
		var senders []int
		for _, o := range f.Ops[1:] {
			if o.Op != "Send" || o.Site != s.line("anysource-race", "send") {
				t.Fatalf("op %+v: want a candidate Send at %s", o, s.line("anysource-race", "send"))
			}
			senders = append(senders, o.Rank)
		}
		if slices.Sort(senders); !slices.Equal(senders, []int{1, 2}) {
			t.Fatalf("candidate senders %v: want ranks 1 and 2", senders)
		}
		if en := res.AnySource; en.Receives != 2 || en.Alternatives != 2 || en.Replayed != 2 || en.Illegal != 1 {
			t.Fatalf("enumeration %+v: want each receive's other sender tried, the second one illegal", en)
		}
	})
	t.Run("nccl-headtohead", func(t *testing.T) {
		f := wantFinding(t, replayUnder(t, s.record("nccl-headtohead"), 1), "deadlock", "program", []int{0, 1}, s.line("nccl-headtohead", "sync"))
		if len(f.Blocked) != 2 || f.Blocked[0].Call.Op != "Stream.Synchronize" || f.Blocked[1].Call.Op != "Stream.Synchronize" {
			t.Fatalf("%s", f.Text(1))
		}
	})
	t.Run("nccl-group", func(t *testing.T) {
		wantClean(t, replayUnder(t, s.record("nccl-group"), 8, "delay"), "delay")
	})
	t.Run("nccl-count-mismatch", func(t *testing.T) {
		wantFinding(t, replayUnder(t, s.record("nccl-count-mismatch"), 1), "count-mismatch", "program", []int{0, 1}, s.line("nccl-count-mismatch", "send"), s.line("nccl-count-mismatch", "recv"))
	})
}
