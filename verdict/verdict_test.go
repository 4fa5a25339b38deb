package verdict_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/p2ptrace/p2ptrace/verdict"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// kindConstants lists the Kind constants declared in kind.go, read from the
// source so that a kind added there without documentation fails the test.
func kindConstants(t *testing.T) []verdict.Kind {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "kind.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []verdict.Kind
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Kind" {
				continue
			}
			for _, v := range vs.Values {
				lit := v.(*ast.BasicLit)
				kinds = append(kinds, verdict.Kind(lit.Value[1:len(lit.Value)-1]))
			}
		}
	}
	return kinds
}

func TestEveryKindIsDocumented(t *testing.T) {
	consts := kindConstants(t)
	if len(consts) < 16 {
		t.Fatalf("found %d kind constants in kind.go: the parser missed them", len(consts))
	}
	doors := []string{verdict.DoorLive, verdict.DoorMerge, verdict.DoorReplay, verdict.DoorHarness}
	seen := map[verdict.Kind]bool{}
	for _, info := range verdict.Kinds() {
		if seen[info.Kind] {
			t.Errorf("%s is listed twice", info.Kind)
		}
		seen[info.Kind] = true
		if info.Meaning == "" || info.Hint == "" || len(info.Doors) == 0 {
			t.Errorf("%s: meaning %q, hint %q, doors %v: each must be set", info.Kind, info.Meaning, info.Hint, info.Doors)
		}
		for _, d := range info.Doors {
			if !slices.Contains(doors, d) {
				t.Errorf("%s: unknown door %q", info.Kind, d)
			}
		}
		if !slices.Contains(consts, info.Kind) {
			t.Errorf("%s is documented but not a constant of kind.go", info.Kind)
		}
	}
	for _, k := range consts {
		if !seen[k] || !k.Known() || k.Hint() == "" {
			t.Errorf("kind %s has no documentation in Kinds()", k)
		}
	}
	if verdict.Kind("no-such-kind").Known() {
		t.Error("an unknown kind is known")
	}
}

func TestStuckKinds(t *testing.T) {
	for _, info := range verdict.Kinds() {
		want := info.Kind == verdict.Deadlock || info.Kind == verdict.Hang
		if info.Kind.Stuck() != want {
			t.Errorf("%s.Stuck() = %v", info.Kind, !want)
		}
	}
}

// sample is one report with every shape of finding the renderers know.
func sample() verdict.Report {
	seed := uint64(3)
	first, start := int64(2), int64(0)
	deadlock := verdict.New(verdict.Deadlock, []int{0, 1}, "no rank can progress; wait-for cycle: rank 0 -> rank 1 -> rank 0",
		verdict.OpRef{Rank: 0, Seq: 1, Op: "Send", Peer: 1, Site: "a.go:10", Call: "Send to rank 1 tag 0 (64 bytes)"},
		verdict.OpRef{Rank: 1, Seq: 1, Op: "Stream.Synchronize", Peer: -1, Site: "a.go:20", Call: "Stream.Synchronize"})
	deadlock.Cycle = []int{0, 1, 0}
	deadlock.Blocked = []verdict.Blocked{
		{Rank: 0, Call: deadlock.Ops[0]},
		{Rank: 1, Call: deadlock.Ops[1], Waiting: []verdict.OpRef{{Rank: 1, Seq: 0, Op: "Stream.Send", Site: "a.go:19", Call: "Stream.Send to rank 0 (64 bytes)"}}},
	}
	deadlock.RevealedBy, deadlock.Seed = "sync", &seed
	hang := verdict.New(verdict.Hang, []int{2}, "no rank can progress; rank 2 polls without success", verdict.OpRef{Rank: 2, Seq: 7, Op: "Test", Site: "b.go:3", Call: "Test"})
	hang.Blocked = []verdict.Blocked{{Rank: 2, Call: hang.Ops[0], Polls: true}}
	hang.Candidates = []string{"rank 0 sent tag 4 to rank 2; rank 2 waits for Irecv from rank 0 tag 3 (8 bytes)"}
	hang.Cause, hang.Fault = verdict.CauseFault, "drop of rank 0's Send to rank 2"
	corrupt := verdict.New(verdict.CorruptedData, []int{1, 0}, "rank 1 received data that rank 0 rewrote\nfirst differing element: [2]",
		verdict.OpRef{Rank: 1, Seq: 3, Op: "Recv", Peer: 0, Tag: 5, Site: "c.go:1"}, verdict.OpRef{Rank: 0, Seq: 4, Op: "Isend", Peer: 1, Tag: 5})
	corrupt.FirstDiff, corrupt.WindowStart, corrupt.Dtype, corrupt.Got, corrupt.Want = &first, &start, "int32", []string{"1", "2", "9"}, []string{"1", "2", "3"}
	crash := verdict.New(verdict.Crash, []int{1}, "rank 1 crashed: panic: boom (at d.go:9)", verdict.OpRef{Rank: 1, Seq: 8, Op: "Barrier", Peer: -1, Site: "d.go:8", Call: "Barrier"})
	// A call the MPI library refused is no op of the trace: no op number.
	mpiErr := verdict.New(verdict.InvalidCall, []int{3}, "rank 3: MPI error in MPI_Allgather: MPI_ERR_COMM: invalid communicator",
		verdict.OpRef{Rank: 3, Op: "MPI_Allgather", Peer: -1, Tag: -1, Site: "e.c:19", Call: "MPI_Allgather", Untraced: true})
	return verdict.Report{
		Findings:  []verdict.Finding{deadlock, hang, corrupt, crash, mpiErr},
		Ends:      []verdict.RankEnd{{Rank: 0, Last: &deadlock.Ops[0], Why: "the run crashed or was stopped"}, {Rank: 3, Why: "the recording was cut short"}},
		AnySource: &verdict.Enumeration{Receives: 4, Alternatives: 9, Replayed: 2, Cap: 2, CutShort: true},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n%s", path, cmp.Diff(string(want), string(got)))
	}
}

func TestReportTextGolden(t *testing.T) {
	rep := sample()
	golden(t, "report.golden", []byte(rep.Text()))
}

// TestEndsSayTheirSharedReasonOnce: the ranks of a trace cut short mostly
// share its one reason, which is then said in the heading, not on each
// rank's line; a rank with no call in the trace is "before its first
// recorded call" (a finding may name a call the trace lacks).
func TestEndsSayTheirSharedReasonOnce(t *testing.T) {
	why := "the run crashed or was stopped (rank 0 has no segment)"
	rep := verdict.Report{Ends: []verdict.RankEnd{{Rank: 0, Why: why}, {Rank: 1, Why: why}}}
	want := "no findings\n\nthe trace was cut short: the run crashed or was stopped (rank 0 has no segment); " +
		"where each rank's record ends (what was pending there is not reported):\n" +
		"    rank 0: before its first recorded call\n" +
		"    rank 1: before its first recorded call\n"
	if got := rep.Text(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestReportJSONGoldenAndRoundTrip(t *testing.T) {
	rep := sample()
	js, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.json", append(js, '\n'))
	var back verdict.Report
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(rep, back); d != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", d)
	}
}

func TestEmptyReport(t *testing.T) {
	var rep verdict.Report
	if rep.Text() != "no findings\n" {
		t.Errorf("text %q", rep.Text())
	}
	js, err := rep.JSON()
	if err != nil || string(js) != "{\n  \"findings\": []\n}" {
		t.Errorf("JSON %s, %v: want an empty findings array", js, err)
	}
}

func TestSetKeepsFirstOfEachSignature(t *testing.T) {
	op := verdict.OpRef{Rank: 0, Op: "Send", Site: "a.go:1"}
	a := verdict.New(verdict.Deadlock, []int{0}, "first", op)
	b := verdict.New(verdict.Deadlock, []int{0}, "same ops, other words", op)
	c := verdict.New(verdict.Hang, []int{0}, "other kind", op)
	var s verdict.Set
	if n := s.Add(a, b); n != 1 {
		t.Fatalf("added %d of two findings with one signature", n)
	}
	if n := s.Add(c, a); n != 1 {
		t.Fatalf("added %d, want only the new kind", n)
	}
	got := s.Findings()
	if len(got) != 2 || got[0].Message != "first" || got[1].Kind != verdict.Hang {
		t.Fatalf("%+v", got)
	}
	if d := verdict.Dedup([]verdict.Finding{a, b, c}); len(d) != 2 || d[0].Message != "first" {
		t.Fatalf("Dedup %+v", d)
	}
}

// TestREADMEListsEveryKind: the README's table of kinds is Kinds(), row for row.
func TestREADMEListsEveryKind(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range verdict.Kinds() {
		row := "| `" + string(k.Kind) + "` | " + k.Meaning + " | "
		if !strings.Contains(string(b), row) {
			t.Errorf("README lacks the row of %s (or it differs from verdict.Kinds):\n%s", k.Kind, row)
		}
	}
}

// TestFindingRestates pins when a replay's finding is a recorded one again:
// same kind, found as recorded, and every op of the recorded one (rank and
// site) among its ops.
func TestFindingRestates(t *testing.T) {
	rec := verdict.New(verdict.Truncation, []int{1}, "MPI error", verdict.OpRef{Rank: 1, Op: "MPI_Recv", Site: "a.c:9"})
	replayed := verdict.New(verdict.Truncation, []int{0, 1}, "sent 40, holds 20",
		verdict.OpRef{Rank: 0, Op: "Send", Site: "a.c:8"}, verdict.OpRef{Rank: 1, Op: "Recv", Site: "a.c:9"})
	underSync := replayed
	underSync.RevealedBy = "sync"
	otherKind := replayed
	otherKind.Kind = verdict.TypeMismatch
	otherRank := verdict.New(verdict.Truncation, []int{0}, "", verdict.OpRef{Rank: 0, Op: "Recv", Site: "a.c:9"})
	noSite := verdict.New(verdict.Truncation, []int{1}, "MPI error", verdict.OpRef{Rank: 1, Op: "MPI_Recv"})
	for _, tc := range []struct {
		name   string
		f, rec verdict.Finding
		want   bool
	}{
		{"same receive", replayed, rec, true},
		{"under a fault", underSync, rec, false},
		{"another kind", otherKind, rec, false},
		{"another rank", otherRank, rec, false},
		{"recorded without a site", replayed, noSite, false},
	} {
		if got := tc.f.Restates(&tc.rec); got != tc.want {
			t.Errorf("%s: Restates = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestExplainsEffects pins when one finding is another's effect, one bug
// seen by two doors: an MPI error the recording reported at a call of a
// collective-mismatch (a truncation or an invalid call, same rank and
// site) or a crash of ranks in that call (an uncaught exception it raised,
// ranks killed while in it), and an in-flight-mutation of a send of a buffer-overlap (the
// pending receive wrote its buffer). FoldEffects removes the effect and
// says it in the cause's message; anything else stays its own finding.
func TestExplainsEffects(t *testing.T) {
	mismatch := verdict.New(verdict.CollectiveMismatch, []int{0, 1}, "sizes differ",
		verdict.OpRef{Rank: 0, Op: "Bcast", Site: "a.c:5"}, verdict.OpRef{Rank: 1, Op: "Bcast", Site: "a.c:5"})
	truncated := verdict.New(verdict.Truncation, []int{1}, "rank 1: MPI error in MPI_Bcast: MPI_ERR_TRUNCATE", verdict.OpRef{Rank: 1, Op: "MPI_Bcast", Site: "a.c:5"})
	invalid := verdict.New(verdict.InvalidCall, []int{0}, "rank 0: MPI error in MPI_Bcast: MPI_ERR_ROOT", verdict.OpRef{Rank: 0, Op: "MPI_Bcast", Site: "a.c:5"})
	elsewhere := verdict.New(verdict.Truncation, []int{1}, "rank 1: MPI error in MPI_Recv", verdict.OpRef{Rank: 1, Op: "MPI_Recv", Site: "a.c:9"})
	otherRank := verdict.New(verdict.Truncation, []int{2}, "rank 2: MPI error in MPI_Bcast", verdict.OpRef{Rank: 2, Op: "MPI_Bcast", Site: "a.c:5"})
	noSite := verdict.New(verdict.Truncation, []int{1}, "rank 1: MPI error in MPI_Bcast", verdict.OpRef{Rank: 1, Op: "MPI_Bcast"})
	crash := verdict.New(verdict.Crash, []int{1}, "rank 1: MPI_Abort", verdict.OpRef{Rank: 1, Op: "MPI_Abort", Site: "a.c:9"})
	crashElsewhere := crash
	raised := verdict.New(verdict.Crash, []int{1}, "rank 1: uncaught exception: RuntimeError: Connection reset by peer", verdict.OpRef{Rank: 1, Op: "uncaught exception", Site: "a.c:5"})
	raisedElsewhere := verdict.New(verdict.Crash, []int{1}, "rank 1: uncaught exception: ValueError", verdict.OpRef{Rank: 1, Op: "uncaught exception", Site: "a.c:7"})
	killedIn := verdict.New(verdict.Crash, []int{0, 1}, "ranks 0, 1 ended without MPI_Finalize (killed?)",
		verdict.OpRef{Rank: 0, Op: "dist.all_reduce", Site: "a.c:5"}, verdict.OpRef{Rank: 1, Op: "dist.all_reduce", Site: "a.c:5"})
	killedOneElsewhere := verdict.New(verdict.Crash, []int{0, 1}, "ranks 0, 1 ended without MPI_Finalize (killed?)",
		verdict.OpRef{Rank: 0, Op: "dist.all_reduce", Site: "a.c:5"}, verdict.OpRef{Rank: 1, Op: "dist.barrier", Site: "a.c:6"})
	killedNoCall := verdict.New(verdict.Crash, []int{0, 1}, "ranks 0, 1 ended without MPI_Finalize (killed?)")
	deadlock := verdict.New(verdict.Deadlock, []int{0, 1}, "stuck", verdict.OpRef{Rank: 0, Op: "Bcast", Site: "a.c:5"})
	overlap := verdict.New(verdict.BufferOverlap, []int{0}, "Irecv and Isend overlap",
		verdict.OpRef{Rank: 0, Op: "MPI_Irecv", Site: "b.c:25"}, verdict.OpRef{Rank: 0, Op: "MPI_Isend", Site: "b.c:26"})
	mutated := verdict.New(verdict.InFlightMutation, []int{0}, "rank 0: the buffer of Isend changed", verdict.OpRef{Rank: 0, Op: "Isend", Site: "b.c:26"})
	mutatedElsewhere := verdict.New(verdict.InFlightMutation, []int{0}, "rank 0: the buffer of Isend changed", verdict.OpRef{Rank: 0, Op: "Isend", Site: "b.c:40"})
	underSync := truncated
	underSync.RevealedBy = "sync"
	invalidInSend := verdict.New(verdict.InvalidCall, []int{0}, "rank 0: Scatter root 0 (-4 bytes): a count is never negative", verdict.OpRef{Rank: 0, Op: "Scatter", Site: "c.c:19"})
	overrun := verdict.New(verdict.BufferOverrun, []int{0}, "rank 0: MPI_Send at c.c:19 sends 20000 bytes from buffer", verdict.OpRef{Rank: 0, Op: "MPI_Send", Site: "c.c:19"})
	killedInSend := verdict.New(verdict.Crash, []int{0}, "rank 0: killed by SIGSEGV inside MPI_Send", verdict.OpRef{Rank: 0, Op: "MPI_Send", Site: "c.c:19"})
	killedLater := verdict.New(verdict.Crash, []int{0}, "rank 0: killed by SIGSEGV inside MPI_Recv", verdict.OpRef{Rank: 0, Op: "MPI_Recv", Site: "c.c:21"})
	hostType := verdict.New(verdict.HostTypeMismatch, []int{1}, "rank 1: MPI_Bcast at a.c:5 receives into a (int[4]) as 4-byte floating-point numbers", verdict.OpRef{Rank: 1, Op: "MPI_Bcast", Site: "a.c:5"})
	hostTypeElsewhere := verdict.New(verdict.HostTypeMismatch, []int{1}, "rank 1: MPI_Recv at a.c:9 receives into b (int) as 4-byte unsigned integers", verdict.OpRef{Rank: 1, Op: "MPI_Recv", Site: "a.c:9"})
	released := verdict.New(verdict.ReleasedBuffer, []int{0}, "rank 0: the buffer of MPI_Isend at b.c:26 was freed",
		verdict.OpRef{Rank: 0, Op: "MPI_Isend", Site: "b.c:26"}, verdict.OpRef{Rank: 0, Op: "free", Site: "b.c:27"})
	mutatedSeenAtWait := verdict.New(verdict.InFlightMutation, []int{0}, "rank 0: the buffer of Isend changed",
		verdict.OpRef{Rank: 0, Op: "Isend", Site: "b.c:26"}, verdict.OpRef{Rank: 0, Op: "Wait", Site: "b.c:28"})
	for _, tc := range []struct {
		name   string
		f, rec verdict.Finding
		want   bool
	}{
		{"mutation of the released send's buffer", released, mutatedSeenAtWait, true},
		{"mutation of another send than the released one", released, mutatedElsewhere, false},
		{"a release does not explain an MPI error", released, truncated, false},
		{"truncation in the collective", mismatch, truncated, true},
		{"truncation of another run (a fault's)", mismatch, underSync, false},
		{"invalid call in the collective", mismatch, invalid, true},
		{"error at another line", mismatch, elsewhere, false},
		{"error on another rank", mismatch, otherRank, false},
		{"error without a site", mismatch, noSite, false},
		{"an abort at another line", mismatch, crashElsewhere, false},
		{"ranks killed in the collective", mismatch, killedIn, true},
		{"a rank killed elsewhere", mismatch, killedOneElsewhere, false},
		{"ranks killed, no call named", mismatch, killedNoCall, false},
		{"exception raised by the collective", mismatch, raised, true},
		{"exception raised at another line", mismatch, raisedElsewhere, false},
		{"exception and an overlap", overlap, raised, false},
		{"not a mismatch", deadlock, truncated, false},
		{"mutation of the overlapping send", overlap, mutated, true},
		{"mutation of another send", overlap, mutatedElsewhere, false},
		{"mutation is not an MPI error", mismatch, mutated, false},
		{"overlap does not explain an MPI error", overlap, truncated, false},
		{"a crash in the overrunning call", overrun, killedInSend, true},
		{"a crash in another call", overrun, killedLater, false},
		{"an overrun does not explain an MPI error", overrun, invalid, false},
		{"the wrong datatype of a mismatched collective", mismatch, hostType, true},
		{"a wrong datatype of another call", mismatch, hostTypeElsewhere, false},
		{"an overrun does not explain a wrong datatype", overrun, hostType, false},
		{"a crash in the call with a negative count", invalidInSend, killedInSend, true},
		{"a crash in another call than the invalid one", invalidInSend, killedLater, false},
		{"an invalid call does not explain a mutation", invalidInSend, mutated, false},
	} {
		if got := tc.f.Explains(&tc.rec); got != tc.want {
			t.Errorf("%s: Explains = %v, want %v", tc.name, got, tc.want)
		}
		// FoldEffects folds what Explains says, whichever comes first.
		if got := len(verdict.FoldEffects([]verdict.Finding{tc.rec, tc.f})); tc.want && got != 1 || !tc.want && got != 2 {
			t.Errorf("%s: FoldEffects left %d findings of 2 (Explains %v)", tc.name, got, tc.want)
		}
	}

	got := verdict.FoldEffects([]verdict.Finding{truncated, elsewhere, crash, mismatch, mutated, overlap})
	want := []string{
		"rank 1: MPI error in MPI_Recv",
		"rank 1: MPI_Abort",
		"sizes differ; so the call failed: rank 1: MPI error in MPI_Bcast: MPI_ERR_TRUNCATE",
		"Irecv and Isend overlap; so the send's buffer changed before the send completed (its payload hashes differ)",
	}
	var msgs []string
	for _, f := range got {
		msgs = append(msgs, f.Message)
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("FoldEffects left:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}

	// A loop's effects, alike, are said once in their cause.
	loop := []verdict.Finding{overlap}
	for range 20000 {
		loop = append(loop, mutated)
	}
	if got := verdict.FoldEffects(loop); len(got) != 1 || got[0].Message != want[3] {
		t.Errorf("FoldEffects of an overlap and 20000 mutations of its send left %d findings, the first %q; want one, %q", len(got), got[0].Message, want[3])
	}
}

// BenchmarkFoldEffects: a merge's findings of a loop, a cause and many
// effects alike, and many findings of distinct calls that explain nothing.
func BenchmarkFoldEffects(b *testing.B) {
	var fs []verdict.Finding
	fs = append(fs, verdict.New(verdict.BufferOverlap, []int{0}, "overlap",
		verdict.OpRef{Rank: 0, Op: "MPI_Irecv", Site: "b.c:25"}, verdict.OpRef{Rank: 0, Op: "MPI_Isend", Site: "b.c:26"}))
	for i := range 10000 {
		fs = append(fs, verdict.New(verdict.InFlightMutation, []int{0}, "changed", verdict.OpRef{Rank: 0, Op: "Isend", Site: "b.c:26"}))
		fs = append(fs, verdict.New(verdict.Truncation, []int{1}, "truncated", verdict.OpRef{Rank: 1, Op: "MPI_Recv", Site: fmt.Sprintf("c.c:%d", i)}))
	}
	work := make([]verdict.Finding, len(fs))
	for b.Loop() {
		copy(work, fs)
		verdict.FoldEffects(work)
	}
}

// A collective-mismatch is about one collective call: findings of the same
// call that pair other members (a replay's arrival order chose another
// first member) are one bug; another call, or a finding without its call
// (older traces), goes by its signature too.
func TestSetKeepsOneFindingPerCollectiveCall(t *testing.T) {
	mismatch := func(a, b int, call *verdict.CollectiveCall) verdict.Finding {
		f := verdict.New(verdict.CollectiveMismatch, []int{a, b}, "roots differ", verdict.OpRef{Rank: a, Op: "Reduce", Site: "a.c:5"}, verdict.OpRef{Rank: b, Op: "Reduce", Site: "a.c:5"})
		f.Collective = call
		return f
	}
	call1 := &verdict.CollectiveCall{Comm: 0, Call: 1}
	var s verdict.Set
	s.Add(mismatch(0, 3, nil)) // recorded by an older merge: no call
	if n := s.Add(mismatch(0, 3, call1)); n != 0 {
		t.Errorf("the same pair again: %d added", n)
	}
	if n := s.Add(mismatch(1, 3, call1), mismatch(2, 3, &verdict.CollectiveCall{Comm: 0, Call: 1})); n != 0 {
		t.Errorf("other pairs of the same call: %d added", n)
	}
	if n := s.Add(mismatch(1, 2, &verdict.CollectiveCall{Comm: 0, Call: 2}), mismatch(0, 1, &verdict.CollectiveCall{Comm: 7, Call: 1})); n != 2 {
		t.Errorf("other calls: %d added, want 2", n)
	}
	// The signature still counts: the same pair at the same lines, in
	// another call (a loop's next round), is the same bug.
	if n := s.Add(mismatch(1, 2, &verdict.CollectiveCall{Comm: 0, Call: 3})); n != 0 {
		t.Errorf("the same pair in another call: %d added", n)
	}
	if n := s.Add(mismatch(0, 2, nil)); n != 1 {
		t.Errorf("another pair without its call: %d added, want 1", n)
	}
	if got := len(s.Findings()); got != 4 {
		t.Errorf("%d findings kept, want 4", got)
	}
}

// TestNamedComms: the communicators a report lists under its findings are
// those the findings name by id ("comm ID", not a longer number that starts
// with it), in the trace's order, with their members and, when known, the
// call that made them.
func TestNamedComms(t *testing.T) {
	all := []verdict.Comm{{ID: 12, Ranks: []int{0, 2}}, {ID: 123, Ranks: []int{1, 3}, Made: "MPI_Comm_split at a.c:12"}, {ID: 7, Ranks: []int{0, 1}}}
	fs := []verdict.Finding{
		verdict.New(verdict.Hang, []int{1}, "rank 0 sent tag 0 to rank 1 on comm 123; rank 1 waits on the world"),
		verdict.New(verdict.CollectiveMismatch, []int{0, 1}, "collective call 1 on comm 7: ...",
			verdict.OpRef{Rank: 0, Op: "Barrier", Call: "Barrier on comm 7"}),
	}
	got := verdict.NamedComms(fs, all)
	if len(got) != 2 || got[0].ID != 123 || got[1].ID != 7 {
		t.Fatalf("NamedComms = %v, want comms 123 and 7 (not 12)", got)
	}
	if got := verdict.NamedComms(fs[:1], nil); got != nil {
		t.Errorf("no comms in the trace: %v", got)
	}
	rep := verdict.Report{Findings: fs, Comms: got}
	want := "\ncommunicators named above (their members' world ranks):\n    comm 123: ranks 1, 3, made by MPI_Comm_split at a.c:12\n    comm 7: ranks 0, 1\n"
	if text := rep.Text(); !strings.Contains(text, want) {
		t.Errorf("report text lacks the legend %q:\n%s", want, text)
	}
	if text := (&verdict.Report{Findings: fs}).Text(); strings.Contains(text, "communicators named above") {
		t.Errorf("a legend without comms:\n%s", text)
	}
}

// TestRankList: one rank is "rank N", several "ranks A, B".
func TestRankList(t *testing.T) {
	for _, c := range []struct {
		ranks []int
		want  string
	}{{[]int{3}, "rank 3"}, {[]int{0, 2}, "ranks 0, 2"}, {[]int{1, 4, 7}, "ranks 1, 4, 7"}} {
		if got := verdict.RankList(c.ranks); got != c.want {
			t.Errorf("RankList(%v) = %q, want %q", c.ranks, got, c.want)
		}
	}
}
