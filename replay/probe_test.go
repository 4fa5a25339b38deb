package replay_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// call is one recorded call of a hand-built MPI trace: its post event and
// what its done event says.
type call struct {
	post trace.Event
	done trace.Event
}

// probeTrace builds an MPI trace as the merge writes one: each call's post,
// its done right after it, Seq counting from 0, then Finalize.
func probeTrace(ranks ...[]call) replay.Events {
	ev := make(replay.Events, len(ranks))
	for r, calls := range ranks {
		for i, c := range calls {
			p, d := c.post, c.done
			p.Kind, p.Rank, p.Seq, p.MatchRank = trace.KindPost, int32(r), uint64(i), trace.NoRank
			d.Kind, d.Rank, d.Seq, d.Op = trace.KindDone, int32(r), uint64(i), p.Op
			if !p.Op.IsRecv() {
				d.MatchRank = trace.NoRank
			}
			ev[r] = append(ev[r], p, d)
		}
		ev[r] = append(ev[r], trace.Event{Kind: trace.KindPost, Rank: int32(r), Seq: uint64(len(calls)), Op: trace.OpFinalize})
	}
	return ev
}

func sendInts(to, n int32, site uint32) call {
	return call{post: trace.Event{Op: trace.OpSend, Peer: to, Count: int64(n), Bytes: 4 * int64(n), Dtype: trace.Int32, Site: site}}
}

// recvInts is a receive from rank from of n ints, matched when recorded
// with rank matched's op seq (a whole message of that rank: count ints).
func recvInts(from, n, matched int32, seq uint64, count int32, site uint32) call {
	return call{post: trace.Event{Op: trace.OpRecv, Peer: from, Count: int64(n), Bytes: 4 * int64(n), Dtype: trace.Int32, Site: site},
		done: trace.Event{MatchRank: matched, MatchSeq: seq, Source: matched, StatusCnt: int64(count)}}
}

// probeAny is a Probe (or, with iprobe, an Iprobe) from any source of tag
// 0 that found a message of count ints of rank found (none: -1).
func probeAny(iprobe bool, found, count int32, site uint32) call {
	c := call{post: trace.Event{Op: trace.OpProbe, Peer: trace.AnySource, Site: site},
		done: trace.Event{Source: found, StatusCnt: 4 * int64(count), Flag: found >= 0}}
	if iprobe {
		c.post.Op = trace.OpIprobe
	}
	if found < 0 {
		c.done.Source = trace.NoRank
	}
	return c
}

// probeRaceTrace is testdata/mpi/probe-race as a trace: rank 0 probes any
// source (rank 1 found first: rank 2 computes), receives 4 ints from the
// probed source at line 11, then 8 ints from the other at line 12; then it
// polls an Iprobe from any source that finds nothing. With twice, it probes
// twice and receives each probed message from its source (probe-race-fixed).
func probeRaceTrace(iprobe, twice bool) replay.Events {
	rank0 := []call{probeAny(iprobe, 1, 4, 10), recvInts(1, 4, 1, 0, 4, 11), recvInts(2, 8, 2, 1, 8, 12)}
	if twice {
		rank0 = []call{probeAny(iprobe, 1, 4, 10), recvInts(1, 8, 1, 0, 4, 11), probeAny(iprobe, 2, 8, 10), recvInts(2, 8, 2, 1, 8, 11)}
	}
	rank0 = append(rank0, probeAny(true, -1, 0, 13))
	return probeTrace(rank0,
		[]call{sendInts(0, 4, 20)},
		[]call{{post: trace.Event{Op: trace.OpCompute, Duration: 1e6}}, sendInts(0, 8, 20)})
}

// TestForcedProbeIsFollowedByItsReceive: a replay with the probe forced to
// rank 2 finds rank 2's message, and the receive that consumed the probed
// message (the next one from the recorded status's source and tag) takes
// rank 2's: the race is the probe's, naming the recorded send (rank 1's)
// and the one it found (rank 2's). Probe and a successful Iprobe alike.
func TestForcedProbeIsFollowedByItsReceive(t *testing.T) {
	for _, iprobe := range []bool{false, true} {
		out, err := replay.Replay(probeRaceTrace(iprobe, false).Source(), replay.Config{Force: &replay.ForcedMatch{Rank: 0, Seq: 0, Src: 2}})
		if err != nil {
			t.Fatal(err)
		}
		p := out.Forced
		if p == nil || p.Seq != 0 || !p.Done() || p.Source != 2 || p.Peer != trace.AnySource {
			t.Fatalf("iprobe %v: forced probe %+v: want it done with rank 2's message, still shown from any source", iprobe, p)
		}
		if len(out.Races) != 1 {
			t.Fatalf("iprobe %v: races %+v: want the probe's alone", iprobe, out.Races)
		}
		r := out.Races[0]
		if r.Recv != p || r.RecordedRank != 1 || r.RecordedSeq != 0 || r.ReplayRank != 2 || r.ReplaySeq != 1 {
			t.Fatalf("iprobe %v: race %+v: want the probe's, recorded rank 1's op 0, replayed rank 2's op 1", iprobe, r)
		}
		fs := replay.Explain(out, siteName, "", false, "")
		f := wantFinding(t, fs, verdict.MessageRace, "program", []int{0, 1, 2}, "main.go:10", "main.go:20")
		if !strings.Contains(f.Message, "found the message of") {
			t.Errorf("iprobe %v: message %q", iprobe, f.Message)
		}
		// In this order the receive sized for rank 1's message takes rank
		// 2's: the model's truncation names it as the program made it, from
		// the probed source.
		f = wantFinding(t, fs, verdict.Truncation, "program", nil, "main.go:11")
		if i := slices.IndexFunc(f.Ops, func(o verdict.OpRef) bool { return o.Site == "main.go:11" }); f.Ops[i].Call != "Recv from rank 2 tag 0 (16 bytes)" {
			t.Errorf("iprobe %v: the receive after the probe: %+v", iprobe, f.Ops[i])
		}
	}
}

// TestCheckEnumeratesAnySourceProbes: check enumerates the other senders
// of each AnySource probe that found a message (not of an Iprobe that found
// nothing), replays each with the probe forced, and judges a legal one by
// re-running the program with the probe pinned, whatever the model made of
// the rest of that order (here the receive sized for rank 1's message is
// truncated, and rank 1's message is left over): only a re-run can tell
// what the program does with the other message.
func TestCheckEnumeratesAnySourceProbes(t *testing.T) {
	for _, iprobe := range []bool{false, true} {
		ev := probeRaceTrace(iprobe, false)
		open := func() (replay.Source, error) { return ev.Source(), nil }
		var pinned []replay.ForcedMatch
		rerun := func(m replay.ForcedMatch) (replay.RerunOutcome, error) {
			pinned = append(pinned, m)
			return replay.RerunOutcome{Failed: true, Evidence: "exit status 15"}, nil
		}
		res, err := replay.Check(open, replay.Config{}, siteName, replay.CheckOptions{Rerun: rerun})
		if err != nil {
			t.Fatal(err)
		}
		en := res.AnySource
		if en.Probes != 1 || en.Receives != 0 || en.Alternatives != 1 || en.Replayed != 1 || en.Illegal != 0 {
			t.Fatalf("iprobe %v: enumeration %+v: want the probe's one alternative, the unanswered Iprobe left out", iprobe, en)
		}
		if !slices.Equal(pinned, []replay.ForcedMatch{{Rank: 0, Seq: 0, Src: 2}}) {
			t.Fatalf("iprobe %v: re-runs %v: want the probe pinned to rank 2", iprobe, pinned)
		}
		if len(res.Findings) != 1 {
			t.Fatalf("iprobe %v: findings %s: want the probe's race alone (the model's truncation is not judged)", iprobe, kinds(res.Findings))
		}
		f := wantFinding(t, res.Findings, verdict.MessageRace, "program", []int{0, 1, 2}, "main.go:10", "main.go:20")
		if f.Ops[0].Seq != 0 || !strings.Contains(f.Message, "re-run with this match forced, the program failed: exit status 15") {
			t.Fatalf("iprobe %v: finding %+v", iprobe, f)
		}
	}
}

// TestCheckProbeAlternativesLegalOnly: of two probes (each message
// received from the probed source, sized by the status), the first can
// find rank 2's message; the second, forced to rank 1, never finds one
// (rank 1's only message went to the first): illegal, not re-run. A clean
// re-run is a note, and without a re-run the race is unconfirmed.
func TestCheckProbeAlternativesLegalOnly(t *testing.T) {
	ev := probeRaceTrace(false, true)
	open := func() (replay.Source, error) { return ev.Source(), nil }
	reruns := 0
	rerun := func(m replay.ForcedMatch) (replay.RerunOutcome, error) {
		reruns++
		return replay.RerunOutcome{}, nil
	}
	res, err := replay.Check(open, replay.Config{}, siteName, replay.CheckOptions{Rerun: rerun})
	if err != nil {
		t.Fatal(err)
	}
	en := res.AnySource
	if en.Probes != 2 || en.Alternatives != 2 || en.Replayed != 2 || en.Illegal != 1 || reruns != 1 {
		t.Fatalf("enumeration %+v, %d re-runs", en, reruns)
	}
	if len(res.Findings) != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "rank 0's Probe at main.go:10 is nondeterministic: 1 alternative(s) re-run, all clean") {
		t.Fatalf("findings %s, notes %q", kinds(res.Findings), res.Notes)
	}
	res, err = replay.Check(open, replay.Config{}, siteName, replay.CheckOptions{NoRerun: "no program"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "unconfirmed race: rank 0's Probe at main.go:10 can match 1 other sender(s) and the model cannot judge what the program does with the message a probe finds") {
		t.Fatalf("findings %s, notes %q", kinds(res.Findings), res.Notes)
	}
	res, err = replay.Check(open, replay.Config{}, siteName, replay.CheckOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	f := wantFinding(t, res.Findings, verdict.MessageRace, "program", []int{0, 1, 2}, "main.go:10", "main.go:20")
	if len(res.Findings) != 1 || !strings.Contains(f.Message, "unconfirmed: the model cannot judge what the program does with the message a probe finds, and the program could not be re-run") {
		t.Fatalf("strict: findings %s: %q", kinds(res.Findings), f.Message)
	}
}

// TestCheckProbeWithoutItsReceiveIsJudgedToo: a probe whose message the
// program then receives from MPI_ANY_SOURCE (no receive of the recorded
// status's source follows it) is enumerated and re-run all the same; its
// race names the ranks whose messages it found (no send: nothing says which
// message of theirs it was).
func TestCheckProbeWithoutItsReceiveIsJudgedToo(t *testing.T) {
	ev := probeTrace(
		[]call{probeAny(true, 1, 4, 10), recvInts(trace.AnySource, 8, 1, 0, 4, 11), recvInts(trace.AnySource, 8, 2, 1, 8, 12)},
		[]call{sendInts(0, 4, 20)},
		[]call{{post: trace.Event{Op: trace.OpCompute, Duration: 1e6}}, sendInts(0, 8, 20)})
	open := func() (replay.Source, error) { return ev.Source(), nil }
	var pinned []replay.ForcedMatch
	rerun := func(m replay.ForcedMatch) (replay.RerunOutcome, error) {
		pinned = append(pinned, m)
		if m.Seq == 0 {
			return replay.RerunOutcome{Failed: true, Evidence: "exit status 1"}, nil
		}
		return replay.RerunOutcome{}, nil
	}
	res, err := replay.Check(open, replay.Config{}, siteName, replay.CheckOptions{Rerun: rerun})
	if err != nil {
		t.Fatal(err)
	}
	en := res.AnySource
	if en.Probes != 1 || en.Receives != 2 || en.Alternatives != 3 || en.Replayed != 3 || en.Illegal != 1 {
		t.Fatalf("enumeration %+v", en)
	}
	if !slices.Contains(pinned, replay.ForcedMatch{Rank: 0, Seq: 0, Src: 2}) {
		t.Fatalf("re-runs %v: the probe pinned to rank 2 is not among them", pinned)
	}
	f := wantFinding(t, res.Findings, verdict.MessageRace, "program", []int{0, 1, 2}, "main.go:10")
	if len(f.Ops) != 1 || !strings.Contains(f.Message, "rank 0's Iprobe from any rank tag 0 found a message of rank 1 when recorded but one of rank 2 under replay") {
		t.Fatalf("finding %+v", f)
	}
}

// TestForcedProbeFromTheFile: a trace file's Source hands a replay the
// Done event of an AnySource probe (its recorded status names the receive
// that follows the forced probe), though it leaves out most Done events:
// the forced replay from the file is the one from memory, race included.
func TestForcedProbeFromTheFile(t *testing.T) {
	dir := t.TempDir()
	for _, iprobe := range []bool{false, true} {
		evs := probeRaceTrace(iprobe, false)
		path := filepath.Join(dir, fmt.Sprintf("probe-%v.p2ptrace", iprobe))
		writeEvents(t, path, evs)
		cfg := replay.Config{Force: &replay.ForcedMatch{Rank: 0, Seq: 0, Src: 2}}
		fromMemory, err := replay.Replay(evs.Source(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(fromMemory.Races) != 1 {
			t.Fatalf("iprobe %v: races from memory %+v: want the probe's", iprobe, fromMemory.Races)
		}
		want := outcomeText(fromMemory)
		tr, err := replay.OpenTrace(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, got := range fileOutcomes(t, tr, cfg) {
			if got != want {
				t.Errorf("iprobe %v, source %d: from the file\n%s\nfrom memory\n%s", iprobe, i, got, want)
			}
		}
		tr.Close()
	}
}
