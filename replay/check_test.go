package replay_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// twoSendersAnySource: ranks 1 and 2 each send once to rank 0, which
// receives from AnySource twice; rank 2 computes first, so rank 1 comes first
// when recorded.
func twoSendersAnySource(r *gpu.Rank) error {
	b := r.Alloc(gpu.Int32, 1)
	if r.ID() != 0 {
		if r.ID() == 2 {
			if err := r.Compute(1000); err != nil {
				return err
			}
		}
		return r.Send(b, 0, 0)
	}
	for range 2 {
		if _, err := r.Recv(b, gpu.AnySource, 0); err != nil {
			return err
		}
	}
	return nil
}

func TestForcedMatchTakesTheForcedSender(t *testing.T) {
	c, ev := record(t, 3, twoSendersAnySource)
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10, Force: &replay.ForcedMatch{Rank: 0, Seq: 0, Src: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Forced == nil || out.Forced.MatchRank != 2 || out.Forced.Peer != -1 {
		t.Fatalf("forced receive %+v: want matched from rank 2, still shown as AnySource", out.Forced)
	}
	fs := replay.Explain(out, c.Site, "", false, "")
	if got := kinds(fs); got != "[message-race/program message-race/program]" {
		t.Fatalf("findings %s", got)
	}
	if !strings.Contains(fs[0].Message, "from any rank") {
		t.Fatalf("message %q: the receive is reported as AnySource", fs[0].Message)
	}
}

func TestCheckEnumeratesAnySourceAlternatives(t *testing.T) {
	c, ev := record(t, 3, twoSendersAnySource)
	open := func() (replay.Source, error) { return ev.Source(), nil }
	// The model replays the other order cleanly and nothing can re-run the
	// program: with Strict the unconfirmed race is a finding.
	res, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	en := res.AnySource
	// Receive 0 (recorded from rank 1) has rank 2 as alternative: legal.
	// Receive 1 (recorded from rank 2) has rank 1, whose only message
	// receive 0 took when the rest runs unforced: illegal, dropped.
	if en.Receives != 2 || en.Alternatives != 2 || en.Replayed != 2 || en.Illegal != 1 || en.CutShort || en.Cap != replay.MaxForcedReplays {
		t.Fatalf("enumeration %+v", en)
	}
	f := wantFinding(t, res.Findings, "message-race", "program", []int{0, 1, 2})
	if len(f.Ops) != 3 || f.Ops[0].Op != "Recv" || f.Ops[1].Rank != 1 || f.Ops[1].Op != "Send" || f.Ops[2].Rank != 2 || f.Ops[2].Op != "Send" {
		t.Fatalf("ops %+v: want the receive, the recorded send (rank 1) and the other candidate (rank 2)", f.Ops)
	}
	for _, o := range f.Ops {
		if !strings.HasPrefix(o.Site, "check_test.go:") {
			t.Fatalf("op %+v has no call site", o)
		}
	}
	render := func(res *replay.CheckResult) string {
		rep := replay.Report{Findings: res.Findings, AnySource: &res.AnySource}
		js, err := rep.JSON()
		if err != nil {
			t.Fatal(err)
		}
		return rep.Text() + string(js)
	}
	again, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := render(res), render(again); a != b {
		t.Fatalf("check is not deterministic:\n%s\n---\n%s", a, b)
	}
}

// TestCheckCausallyImpossibleAlternativeIsNoRace: rank 2 sends to rank 0
// only after rank 0 received rank 1's message and answered rank 2, so rank
// 0's first AnySource receive cannot match rank 2, and its second cannot
// match rank 1 (which sent once).
func TestCheckCausallyImpossibleAlternativeIsNoRace(t *testing.T) {
	c, ev := record(t, 3, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 1)
		switch r.ID() {
		case 0:
			if _, err := r.Recv(b, gpu.AnySource, 0); err != nil {
				return err
			}
			if err := r.Send(b, 2, 1); err != nil {
				return err
			}
			_, err := r.Recv(b, gpu.AnySource, 0)
			return err
		case 1:
			return r.Send(b, 0, 0)
		default:
			if _, err := r.Recv(b, 0, 1); err != nil {
				return err
			}
			return r.Send(b, 0, 0)
		}
	})
	open := func() (replay.Source, error) { return ev.Source(), nil }
	res, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 {
		t.Fatalf("findings %s: the alternatives are causally impossible", kinds(res.Findings))
	}
	if en := res.AnySource; en.Alternatives != 2 || en.Replayed != 2 || en.Illegal != 2 {
		t.Fatalf("enumeration %+v: want both alternatives replayed and found illegal", en)
	}
}

func TestCheckCapsForcedReplays(t *testing.T) {
	const n = 6 // AnySource receives on rank 0; ranks 1 and 2 send n/2 each
	c, ev := record(t, 3, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 1)
		if r.ID() != 0 {
			for range n / 2 {
				if err := r.Send(b, 0, 0); err != nil {
					return err
				}
			}
			return nil
		}
		for range n {
			if _, err := r.Recv(b, gpu.AnySource, 0); err != nil {
				return err
			}
		}
		return nil
	})
	open := func() (replay.Source, error) { return ev.Source(), nil }
	var totals []int
	res, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{MaxForced: 3, Progress: func(done, total int) {
		totals = append(totals, total)
	}})
	if err != nil {
		t.Fatal(err)
	}
	en := res.AnySource
	if en.Receives != n || en.Alternatives != n || en.Replayed != 3 || en.Cap != 3 || !en.CutShort {
		t.Fatalf("enumeration %+v: want %d alternatives, 3 replayed, cut short", en, n)
	}
	if len(totals) == 0 || totals[len(totals)-1] != len(totals) || slices.Min(totals) != slices.Max(totals) {
		t.Fatalf("progress totals %v", totals)
	}
	rep := replay.Report{Findings: res.Findings, AnySource: &res.AnySource}
	if txt := rep.Text(); !strings.Contains(txt, "AnySource alternatives were cut short: 3 of 6 replayed (the cap is 3 forced replays)") {
		t.Fatalf("report does not say the cap cut the enumeration short:\n%s", txt)
	}
	js, err := rep.JSON()
	if err != nil || !strings.Contains(string(js), `"cut_short": true`) {
		t.Fatalf("%v\n%s", err, js)
	}
	full, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if full.AnySource.CutShort || full.AnySource.Replayed != n {
		t.Fatalf("uncapped enumeration %+v", full.AnySource)
	}
}

// TestDropHangNamesFewDrops: a hang under drop:nth=all names the first
// MaxListedDrops dropped messages and counts the others, even past what a
// fault plan keeps.
func TestDropHangNamesFewDrops(t *testing.T) {
	const n = faults.MaxKept + 10
	c, ev := record(t, 2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 1)
		if r.ID() == 0 {
			for range n {
				if err := r.Send(b, 1, 0); err != nil {
					return err
				}
			}
			return nil
		}
		for range n {
			if _, err := r.Recv(b, 0, 0); err != nil {
				return err
			}
		}
		return nil
	})
	open := func() (replay.Source, error) { return ev.Source(), nil }
	fs, err := replay.Run(open, replay.Config{EagerLimit: 64 << 10}, c.Site, mustSpecs(t, "drop:nth=all"), 0)
	if err != nil {
		t.Fatal(err)
	}
	f := wantFinding(t, fs, "hang", "fault", []int{1})
	parts := strings.Split(f.Fault, "; ")
	if len(parts) != replay.MaxListedDrops+1 || !strings.HasPrefix(parts[0], "drop on rank 0 -> 1 tag 0 (Send seq 0)") ||
		parts[len(parts)-1] != fmt.Sprintf("and %d more dropped messages", n-replay.MaxListedDrops) {
		t.Fatalf("fault %q", f.Fault)
	}
}

func mustSpecs(t *testing.T, ss ...string) []faults.Spec {
	t.Helper()
	specs, err := faults.ParseAll(ss)
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

// TestCheckSendStuckAsRecordedIsOneFinding: both ranks Send 64 KiB (past
// the eager limit) then Recv: the replay as recorded deadlocks in the two
// Sends. Under sync it deadlocks the same way; that the Sends would
// complete if buffered is the same bug, not unsafe-buffering besides.
// With 64 bytes (eager) the recorded run completes, and unsafe-buffering
// is the finding.
func TestCheckSendStuckAsRecordedIsOneFinding(t *testing.T) {
	exchange := func(bytes int64, sites bool) []replay.Finding {
		var send, recv uint32
		if sites {
			send, recv = 1, 2
		}
		rank := func(peer int32) []trace.Event {
			return []trace.Event{
				{Op: trace.OpSend, Peer: peer, Bytes: bytes, Count: bytes / 4, Dtype: trace.Int32, Site: send},
				{Op: trace.OpRecv, Peer: peer, Bytes: bytes, Count: bytes / 4, Dtype: trace.Int32, Site: recv},
			}
		}
		if sites {
			return checkEvents(t, mpiTrace(rank(1), rank(0)))
		}
		// A C program built without -g: no site has a line.
		ev := mpiTrace(rank(1), rank(0))
		open := func() (replay.Source, error) { return ev.Source(), nil }
		res, err := replay.Check(open, replay.Config{EagerLimit: 4040}, func(uintptr) string { return "" }, replay.CheckOptions{NoRerun: "a test"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Findings
	}
	for _, sites := range []bool{true, false} {
		fs := exchange(64<<10, sites)
		if len(fs) != 1 || fs[0].Kind != verdict.Deadlock || fs[0].RevealedBy != "" || !slices.Equal(fs[0].Cycle, []int{0, 1, 0}) {
			t.Errorf("large, sites %v: want the deadlock as recorded alone, cycle 0 -> 1 -> 0, got %s", sites, kinds(fs))
			continue
		}
		for r, b := range fs[0].Blocked {
			if b.Rank != r || b.Call.Op != "Send" || sites && b.Call.Site != "main.go:1" {
				t.Errorf("large, sites %v: blocked %+v, want rank %d's Send at main.go:1", sites, b, r)
			}
		}
	}
	fs := exchange(64, true)
	if len(fs) != 3 || fs[0].Kind != verdict.Deadlock || fs[0].RevealedBy != "sync" || fs[1].Kind != verdict.UnsafeBuffering || fs[2].Kind != verdict.UnsafeBuffering {
		t.Errorf("small: want a deadlock and two unsafe-bufferings under sync, got %s", kinds(fs))
	}
}

// TestCheckStuckAsRecordedIsOneFinding: rank 0 sends tag 0 (eager), rank 1
// receives tag 1: a hang as recorded. Under sync the Send blocks too, a
// deadlock of both, and the Send would complete if buffered; all of it is
// the wrong tag, reported once, as the hang.
func TestCheckStuckAsRecordedIsOneFinding(t *testing.T) {
	fs := checkEvents(t, mpiTrace(
		[]trace.Event{{Op: trace.OpSend, Peer: 1, Tag: 0, Bytes: 64, Count: 16, Dtype: trace.Int32, Site: 1}},
		[]trace.Event{{Op: trace.OpRecv, Peer: 0, Tag: 1, Bytes: 64, Count: 16, Dtype: trace.Int32, Site: 2}}))
	if len(fs) != 1 || fs[0].Kind != verdict.Hang || fs[0].RevealedBy != "" || !slices.Equal(fs[0].Ranks, []int{1}) {
		t.Fatalf("want the hang as recorded alone, got %s", kinds(fs))
	}
	if b := fs[0].Blocked; len(b) != 1 || b[0].Rank != 1 || b[0].Call.Op != "Recv" || b[0].Call.Site != "main.go:2" {
		t.Errorf("blocked %+v, want rank 1's Recv at main.go:2", b)
	}
}

// repliesToItsSenders: ranks 1..3 each send to rank 0 and wait for its
// reply; rank 0 receives from AnySource and replies to the status's source,
// as MPICH's probe_unexp does. Every order is correct: the replies follow
// the matches.
func repliesToItsSenders(r *gpu.Rank) error {
	b := r.Alloc(gpu.Int32, 1)
	if r.ID() != 0 {
		if err := r.Send(b, 0, 0); err != nil {
			return err
		}
		_, err := r.Recv(b, 0, 1)
		return err
	}
	for range r.Size() - 1 {
		st, err := r.Recv(b, gpu.AnySource, 0)
		if err != nil {
			return err
		}
		if err := r.Send(b, st.Source, 1); err != nil {
			return err
		}
	}
	return nil
}

// TestCheckPastTheCapJudgesDivergedRunsByForcedReplays: with the forced
// replays cut short by the cap, a fault replay in which an AnySource
// receive took another sender than recorded went on with calls the
// program made only after the recorded match (replies to the recorded
// sources): under sync that deadlocks. The forced replays of that
// receive's alternatives cover the match, so the run's findings are theirs
// to judge, and the program is clean in every order.
func TestCheckPastTheCapJudgesDivergedRunsByForcedReplays(t *testing.T) {
	// (Recorded with a seed whose order of the three sends' arrivals is
	// not the order the sync replay's seed 0 draws.)
	c := replay.NewCollector()
	if err := gpu.Launch(4, repliesToItsSenders, gpu.RecordTo(c), gpu.Seed(1)); err != nil {
		t.Fatal(err)
	}
	ev := c.Events(4)
	open := func() (replay.Source, error) { return ev.Source(), nil }
	// The sync replay alone diverges and deadlocks (what the check must
	// not report as the program's).
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10, Faults: syncPlan(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Races) == 0 || len(out.Problems) == 0 {
		t.Fatalf("sync replay: races %d, problems %+v: the test needs one that diverges and is stuck", len(out.Races), out.Problems)
	}
	res, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{MaxForced: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !res.AnySource.CutShort || res.AnySource.Replayed != 2 {
		t.Fatalf("enumeration %+v: want 2 replayed, cut short", res.AnySource)
	}
	if len(res.Findings) != 0 {
		t.Fatalf("findings %s: a diverged run's effects, which the forced replays judge", kinds(res.Findings))
	}
}

// syncPlan is the fault plan of the sync fault (zero buffering).
func syncPlan(t *testing.T) *faults.Plan {
	t.Helper()
	s, err := faults.Parse("sync")
	if err != nil {
		t.Fatal(err)
	}
	return faults.NewPlan([]faults.Spec{s}, 0)
}
