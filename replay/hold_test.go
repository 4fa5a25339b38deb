package replay_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// readyPair is a two-rank program around one ready send from rank 0 to
// rank 1: before (rank 1's calls before its receive), between (after it,
// before its Wait) and first (rank 0's calls before the send) say what
// orders the two. Rank 0 computes a microsecond before its send, so the
// receive is always posted first when recorded: only a hold can tell.
type readyPair struct {
	before, between func(r *gpu.Rank) error
	first           func(r *gpu.Rank) error
	send            func(r *gpu.Rank, b *gpu.Buffer) error
}

func (p readyPair) run(r *gpu.Rank) error {
	b := r.Alloc(gpu.Float32, 4)
	if r.ID() == 1 {
		if p.before != nil {
			if err := p.before(r); err != nil {
				return err
			}
		}
		q, err := r.Irecv(b, 0, 7)
		if err != nil {
			return err
		}
		if p.between != nil {
			if err := p.between(r); err != nil {
				return err
			}
		}
		_, err = r.Wait(q)
		return err
	}
	if err := r.Compute(time.Microsecond); err != nil {
		return err
	}
	if p.first != nil {
		if err := p.first(r); err != nil {
			return err
		}
	}
	if p.send != nil {
		return p.send(r, b)
	}
	return r.Rsend(b, 1, 7)
}

func barrier(r *gpu.Rank) error { return r.Barrier() }

func sendSync(r *gpu.Rank) error { return r.Send(r.Alloc(gpu.Int32, 1), 0, 99) }

func recvSync(r *gpu.Rank) error {
	_, err := r.Recv(r.Alloc(gpu.Int32, 1), 1, 99)
	return err
}

// pollSync receives recvSync's message by polling Test: while the held
// rank waits, rank 0 polls without success (and parks: see PollLimit).
func pollSync(r *gpu.Rank) error {
	q, err := r.Irecv(r.Alloc(gpu.Int32, 1), 1, 99)
	if err != nil {
		return err
	}
	for {
		done, _, err := r.Test(q)
		if err != nil || done {
			return err
		}
	}
}

// TestCheckJudgesReadySendsBySynchronization pins the rule of MPI-3.1
// sec. 3.4 as check applies it: a ready send is a finding unless something
// (a barrier, a message sent after the post) orders its receive's post
// before it, whatever the recorded timing; a standard send is never judged.
func TestCheckJudgesReadySendsBySynchronization(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       readyPair
		finding bool
	}{
		{"nothing between", readyPair{}, true},
		{"a barrier after the post", readyPair{between: barrier, first: barrier}, false},
		{"a barrier before the post", readyPair{before: barrier, first: barrier}, true},
		{"a message sent after the post", readyPair{between: sendSync, first: recvSync}, false},
		{"a message sent before the post", readyPair{before: sendSync, first: recvSync}, true},
		{"a message sent after the post, polled for", readyPair{between: sendSync, first: pollSync}, false},
		{"a standard send", readyPair{send: func(r *gpu.Rank, b *gpu.Buffer) error { return r.Send(b, 1, 7) }}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ev := record(t, 2, tc.p.run)
			if out, err := replay.Replay(ev.Source(), replay.Config{}); err != nil || len(out.Problems) > 0 {
				t.Fatalf("replay as recorded: %v %+v: the run's timing must post the receive first, or the test shows nothing", err, out)
			}
			open := func() (replay.Source, error) { return ev.Source(), nil }
			res, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.finding {
				if len(res.Findings) != 0 {
					t.Fatalf("findings %s, want none", kinds(res.Findings))
				}
				return
			}
			if len(res.Findings) != 1 {
				t.Fatalf("findings %s, want one ready-without-recv", kinds(res.Findings))
			}
			f := wantFinding(t, res.Findings, verdict.ReadyWithoutRecv, verdict.CauseProgram, []int{0, 1})
			if len(f.Ops) != 1 || f.Ops[0].Rank != 0 || !strings.HasPrefix(f.Ops[0].Site, "hold_test.go:") {
				t.Fatalf("ops %+v: want rank 0's send at its line", f.Ops)
			}
			if want := "under --hold-post 1:"; !strings.Contains(f.Text(1), want) {
				t.Fatalf("finding %q does not say %q", f.Text(1), want)
			}
			if want := "but nothing orders rank 1's matching receive (Irecv at hold_test.go:"; !strings.Contains(f.Message, want) {
				t.Fatalf("message %q lacks %q", f.Message, want)
			}
		})
	}
}

// TestHeldPostReplaysAlike: a held replay is deterministic, and holding a
// rank back changes nothing in a program whose ready send waits for it.
func TestHeldPostReplaysAlike(t *testing.T) {
	c, ev := record(t, 2, readyPair{between: barrier, first: barrier}.run)
	hold := &replay.HeldPost{Rank: 1, Seq: 0}
	var texts []string
	for range 2 {
		out, err := replay.Replay(ev.Source(), replay.Config{Hold: hold})
		if err != nil {
			t.Fatal(err)
		}
		if out.Stuck || len(out.Problems) > 0 {
			t.Fatalf("held replay: %+v", out.Problems)
		}
		if want := int64(len(ev[0]) + len(ev[1])); out.Events != want {
			t.Fatalf("held replay read %d events, want %d", out.Events, want)
		}
		fs := replay.Explain(out, c.Site, "", false, "")
		texts = append(texts, fmt.Sprint(out.Events, fs))
	}
	if texts[0] != texts[1] {
		t.Fatalf("held replays differ:\n%s\n%s", texts[0], texts[1])
	}
}

// TestCheckCapsHeldReplays: past MaxHeldReplays ready sends, check says how
// many it left untried.
func TestCheckCapsHeldReplays(t *testing.T) {
	const n = replay.MaxHeldReplays + 3
	c, ev := record(t, 2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		for i := range n {
			if r.ID() == 1 {
				q, err := r.Irecv(b, 0, i)
				if err != nil {
					return err
				}
				if err := r.Barrier(); err != nil {
					return err
				}
				if _, err := r.Wait(q); err != nil {
					return err
				}
				continue
			}
			if err := r.Barrier(); err != nil {
				return err
			}
			if err := r.Rsend(b, 1, i); err != nil {
				return err
			}
		}
		return nil
	})
	open := func() (replay.Source, error) { return ev.Source(), nil }
	res, err := replay.Check(open, replay.Config{}, c.Site, replay.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 {
		t.Fatalf("findings %s, want none: every send follows a barrier after its receive", kinds(res.Findings))
	}
	want := fmt.Sprintf("ready sends: 3 more were not replayed with their receive held back (at most %d replays)", replay.MaxHeldReplays)
	if !slices.Contains(res.Notes, want) {
		t.Fatalf("notes %q lack %q", res.Notes, want)
	}
}

// TestReadySendFindingsOfATraceFile: what record adds to a trace it wrote.
func TestReadySendFindingsOfATraceFile(t *testing.T) {
	tr := recordedTrace(t, readyPair{}.run, func(fs []verdict.Finding) []verdict.Finding { return fs })
	fs, err := tr.ReadySendFindings()
	if err != nil {
		t.Fatal(err)
	}
	f := wantFinding(t, fs, verdict.ReadyWithoutRecv, verdict.CauseProgram, []int{0, 1})
	if f.RevealedBy != "--hold-post 1:0" {
		t.Fatalf("revealed by %q", f.RevealedBy)
	}
	clean := recordedTrace(t, readyPair{between: barrier, first: barrier}.run, func(fs []verdict.Finding) []verdict.Finding { return fs })
	if fs, err := clean.ReadySendFindings(); err != nil || len(fs) != 0 {
		t.Fatalf("ordered ready send: %v %s", err, kinds(fs))
	}
}

func TestParseHeldPost(t *testing.T) {
	h, err := replay.ParseHeldPost("1:3")
	if err != nil || h != (replay.HeldPost{Rank: 1, Seq: 3}) || h.String() != "1:3" {
		t.Fatalf("1:3: %+v %v", h, err)
	}
	for _, bad := range []string{"", "1", "1:", ":3", "-1:3", "1:x", "1:3:4"} {
		_, err := replay.ParseHeldPost(bad)
		if err == nil || !strings.Contains(err.Error(), "want RANK:SEQ, e.g. 1:3") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestHeldReplayFollowsCollectiveRules: a collective call orders a ready
// send after its receive only as MPI-3.1 sec. 5 says it moves data, not
// as a barrier would: rank 1 posts its Irecv, then calls the collective,
// and rank 0 calls it, then sends in ready mode. A Bcast from rank 1, or a
// Reduce or Allreduce that needs rank 1's contribution, cannot complete
// at rank 0 before rank 1 joined, so the post comes first; a Bcast from
// rank 0 may complete at rank 0 at once (sec. 5.13: collectives need not
// synchronize), so only timing posts the receive first.
func TestHeldReplayFollowsCollectiveRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		op      trace.Op
		root    int
		finding bool
	}{
		{"Bcast from the receiver", trace.OpBcast, 1, false},
		{"Bcast from the sender", trace.OpBcast, 0, true},
		{"Reduce to the sender", trace.OpReduce, 0, false},
		{"Allreduce", trace.OpAllreduce, -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			coll := func(r int) trace.Event { return collEv(tc.op, r, 2, tc.root, 4, 9) }
			rsend := trace.Event{Op: trace.OpRsend, Peer: 1, Bytes: 16, Count: 4, Dtype: trace.Int32, Site: 2}
			irecv := trace.Event{Op: trace.OpIrecv, Peer: 0, Bytes: 16, Count: 4, Dtype: trace.Int32, Req: 1, Site: 3}
			wait := trace.Event{Op: trace.OpWait, Reqs: []uint64{1}, Site: 4}
			ev := mpiTrace([]trace.Event{coll(0), rsend}, []trace.Event{irecv, coll(1), wait})
			// The receive's Done names the send it took, as recorded.
			done := trace.Event{Kind: trace.KindDone, Rank: 1, Seq: 0, Op: trace.OpIrecv, MatchRank: 0, MatchSeq: 1, Source: 0, StatusCnt: 4}
			ev[1] = slices.Insert(ev[1], 3, done)
			fs := checkEvents(t, ev)
			if !tc.finding {
				if len(fs) != 0 {
					t.Fatalf("findings %s, want none", kinds(fs))
				}
				return
			}
			if len(fs) != 1 || fs[0].Kind != verdict.ReadyWithoutRecv || fs[0].RevealedBy != "--hold-post 1:0" || fs[0].Ops[0].Site != "main.go:2" {
				t.Fatalf("findings %s %+v, want the Rsend at main.go:2 held", kinds(fs), fs)
			}
		})
	}
}

// FuzzParseRefs: the parsers of --hold-post and --force-match take any
// text without panicking, and what they accept prints back as itself.
func FuzzParseRefs(f *testing.F) {
	for _, s := range []string{"1:3", "0:0=2", "1:", ":3", "-1:3", "1:3=", "4294967296:1", "1:18446744073709551616", " 1:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if h, err := replay.ParseHeldPost(s); err == nil {
			if again, err := replay.ParseHeldPost(h.String()); err != nil || again != h {
				t.Fatalf("%q: %+v prints as %q, which parses as %+v, %v", s, h, h.String(), again, err)
			}
		}
		if m, err := replay.ParseForcedMatch(s); err == nil {
			if again, err := replay.ParseForcedMatch(m.String()); err != nil || again != m {
				t.Fatalf("%q: %+v prints as %q, which parses as %+v, %v", s, m, m.String(), again, err)
			}
		}
	})
}

// TestHeldReplayThatRacedJudgesNothing: rank 0 waits for rank 1's word
// with an AnySource receive, then sends in ready mode; rank 2's message of
// the same tag comes a millisecond later. Held back, rank 1 says nothing
// for that long, and the receive takes rank 2's message instead: a run in
// which the program, whose later calls may depend on the sender, need not
// have made the recorded ones. As for the battery's other replays, such a
// run's findings are left to the forced replays of that receive (here: an
// unconfirmed race, a note), and the hold reports nothing.
func TestHeldReplayThatRacedJudgesNothing(t *testing.T) {
	c, ev := record(t, 3, func(r *gpu.Rank) error {
		b, w := r.Alloc(gpu.Float32, 4), r.Alloc(gpu.Int32, 1)
		switch r.ID() {
		case 0:
			if _, err := r.Recv(w, gpu.AnySource, 99); err != nil {
				return err
			}
			if err := r.Rsend(b, 1, 7); err != nil {
				return err
			}
			_, err := r.Recv(w, gpu.AnySource, 99)
			return err
		case 1:
			q, err := r.Irecv(b, 0, 7)
			if err != nil {
				return err
			}
			if err := r.Send(w, 0, 99); err != nil {
				return err
			}
			_, err = r.Wait(q)
			return err
		}
		if err := r.Compute(time.Millisecond); err != nil {
			return err
		}
		return r.Send(w, 0, 99)
	})
	open := func() (replay.Source, error) { return ev.Source(), nil }
	res, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{NoRerun: "a test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 {
		t.Fatalf("findings %s, want none: the held run raced", kinds(res.Findings))
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "unconfirmed race") }) {
		t.Fatalf("notes %q: want the race the forced replay found, unconfirmed", res.Notes)
	}
	// The same run held, alone, does show the ready send: the trim is check's.
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10, Hold: &replay.HeldPost{Rank: 1, Seq: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Races) == 0 || !slices.ContainsFunc(out.Problems, func(p sim.Problem) bool { return p.Kind == verdict.ReadyWithoutRecv }) {
		t.Fatalf("held replay: races %d, problems %+v: want a race and the ready send", len(out.Races), out.Problems)
	}
}
