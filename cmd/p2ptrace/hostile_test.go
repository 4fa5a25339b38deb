package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// badOpsTrace writes a complete 2-rank trace of a send and a receive with
// the fields fix sets (on both posts).
func badOpsTrace(t *testing.T, dir, name string, fix func(*trace.Event)) string {
	t.Helper()
	path := filepath.Join(dir, name+".p2ptrace")
	w, err := trace.Create(path, trace.Header{WorldSize: 2, Backend: "sim", EagerLimit: 4096}, trace.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	evs := []trace.Event{
		{Kind: trace.KindPost, Rank: 0, Seq: 0, Op: trace.OpSend, Peer: 1, Tag: 5, Dtype: trace.Int32, Count: 1, Bytes: 4, MatchRank: trace.NoRank},
		{Kind: trace.KindPost, Rank: 1, Seq: 0, Op: trace.OpRecv, Peer: 0, Tag: 5, Dtype: trace.Int32, Count: 1, Bytes: 4, MatchRank: trace.NoRank},
		{Kind: trace.KindDone, Rank: 0, Seq: 0, Op: trace.OpSend, MatchRank: 1, MatchSeq: 0},
		{Kind: trace.KindDone, Rank: 1, Seq: 0, Op: trace.OpRecv, MatchRank: 0, MatchSeq: 0, StatusTag: 5, StatusCnt: 1},
	}
	for i := range evs {
		if evs[i].Kind == trace.KindPost {
			fix(&evs[i])
		}
		w.Append(&evs[i])
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	return path
}

// Counts, sizes, ranks and tags read from a trace are checked before use:
// an op no call can have (a size of the other sign than its count) is a
// clean input error (exit 2) naming the op; a negative count (the
// program's MPI_ERR_COUNT) and a peer outside the world are findings,
// never a panic (a negative count made check panic in copyPayload).
func TestInvalidOpFields(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		fix  func(*trace.Event)
		code int
		want string // on stderr (exit 2) or stdout
	}{
		{"negative-count", func(e *trace.Event) { e.Count, e.Bytes = -1, -4 }, 1, "invalid-call (cause: program)\n    rank 0: Send to rank 1 tag 5 (count -1): a count is never negative"},
		{"negative-bytes", func(e *trace.Event) { e.Bytes = -4 }, 2, "trace does not replay: rank 0 seq 0: Send with count 1 and -4 bytes\n"},
		{"negative-count-positive-bytes", func(e *trace.Event) { e.Count = -1 }, 2, "trace does not replay: rank 0 seq 0: Send with count -1 and 4 bytes\n"},
		{"huge-bytes", func(e *trace.Event) { e.Bytes = 1 << 62 }, 0, "no findings"},
		{"peer-out-of-range", func(e *trace.Event) { e.Peer = 1 << 30 }, 1, "rank 0: Send to rank 1073741824, but the world has ranks 0..1"},
	} {
		path := badOpsTrace(t, dir, tc.name, tc.fix)
		for _, cmd := range []string{"replay", "check"} {
			code, out, errs := runCmd(t, cmd, path)
			got := out
			if tc.code == 2 {
				got = errs
			}
			if code != tc.code || !strings.Contains(got, tc.want) || strings.Contains(errs, "panic") {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want exit %d and %q", cmd, tc.name, code, out, errs, tc.code, tc.want)
			}
		}
		for _, cmd := range []string{"show", "verify", "export"} {
			if code, out, errs := runCmd(t, cmd, path); code != 0 {
				t.Errorf("%s %s: exit %d\n%s%s", cmd, tc.name, code, out, errs)
			}
		}
	}
}

// Strings from a trace reach the terminal with their control characters
// escaped: a trace cannot set the terminal's title or clear the screen.
func TestTraceStringsEscaped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evil.p2ptrace")
	w, err := trace.Create(path, trace.Header{WorldSize: 2, Backend: "sim", Command: []string{"prog", "\x1b]0;owned\x07"}}, trace.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	w.AddSite(trace.Site{ID: 1, Function: "main.\x1b[31mf", File: "a\x1b[2J.go", Line: 3})
	evs := []trace.Event{
		{Kind: trace.KindPost, Rank: 0, Seq: 0, Op: trace.OpSend, Peer: 7, Tag: 5, Dtype: trace.Int32, Count: 1, Bytes: 4, Site: 1, MatchRank: trace.NoRank},
		{Kind: trace.KindDone, Rank: 0, Seq: 0, Op: trace.OpSend, MatchRank: trace.NoRank},
	}
	for i := range evs {
		w.Append(&evs[i])
	}
	if err := w.Close(trace.StatusCrashed, "rank 0: \x1b[2Jgone"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"show"}, {"show", "--events"}, {"show", "--json"}, {"replay"}, {"check"}, {"export"}, {"verify"}} {
		code, out, errs := runCmd(t, append(args, path)...)
		if code == 2 || strings.ContainsAny(out+errs, "\x1b\x07") {
			t.Errorf("%v: exit %d, raw control characters:\n%q\n%q", args, code, out, errs)
		}
		if args[0] == "show" && len(args) == 1 && !strings.Contains(out, `prog \x1b]0;owned\x07`) {
			t.Errorf("show: the command line is not shown escaped:\n%s", out)
		}
		if args[0] == "replay" && !strings.Contains(out, `a\x1b[2J.go:3`) {
			t.Errorf("replay: the site is not shown escaped:\n%s", out)
		}
	}
}
