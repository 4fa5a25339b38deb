package replay_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// exchangeTrace is an all-to-all of n ranks: each Isends to every other,
// Irecvs from every other (from AnySource every fifth: its recorded Done,
// after the Waitall's post, names the send of the rank it stands for), and
// waits for all of them in one Waitall, longer than a run of events a
// source hands out; with stuck, rank 0 also receives a message nobody
// sends.
func exchangeTrace(n int, stuck bool) replay.Events {
	ev := make(replay.Events, n)
	for r := range n {
		var reqs []uint64
		var dones []trace.Event
		add := func(e trace.Event) {
			e.Kind, e.Rank, e.Seq = trace.KindPost, int32(r), uint64(len(ev[r]))
			e.Req = uint64(len(reqs) + 1)
			e.Dtype, e.Count, e.Bytes = trace.Uint8, 8, 8
			reqs = append(reqs, e.Req)
			ev[r] = append(ev[r], e)
		}
		for k := 1; k < n; k++ {
			add(trace.Event{Op: trace.OpIsend, Peer: int32((r + k) % n), Tag: 3})
		}
		for k := 1; k < n; k++ {
			peer := int32((r - k + n) % n)
			if k%5 == 0 {
				// Rank peer's send to r is its k-th, seq k-1.
				dones = append(dones, trace.Event{Kind: trace.KindDone, Rank: int32(r), Seq: uint64(len(ev[r])),
					Op: trace.OpIrecv, MatchRank: peer, MatchSeq: uint64(k - 1)})
				peer = trace.AnySource
			}
			add(trace.Event{Op: trace.OpIrecv, Peer: peer, Tag: 3})
		}
		if stuck && r == 0 {
			add(trace.Event{Op: trace.OpIrecv, Peer: 1, Tag: 4})
		}
		seq := uint64(len(ev[r]))
		ev[r] = append(ev[r], trace.Event{Kind: trace.KindPost, Rank: int32(r), Seq: seq, Op: trace.OpWaitall, Reqs: reqs})
		ev[r] = append(ev[r], dones...)
		ev[r] = append(ev[r], trace.Event{Kind: trace.KindPost, Rank: int32(r), Seq: seq + 1, Op: trace.OpFinalize})
	}
	return ev
}

// TestForecastsChangeNothing: the driver's forecasts of posts (the engine
// loads what they will touch) change no replay. An exchange of 130 ranks
// makes enough ops (33 K) for the engine to want them; under delays its
// AnySource receives take other ranks' messages, and the deadlocks that
// follow name cycles and blocked calls that any change to matching would
// change.
func TestForecastsChangeNothing(t *testing.T) {
	evs := exchangeTrace(130, true)
	specs, err := faults.ParseAll([]string{"delay:max=20us,p=0.5"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, cfg := range []func() replay.Config{
		func() replay.Config { return replay.Config{} },
		func() replay.Config { return replay.Config{Seed: 1, Faults: mutateOnly{}} },
		func() replay.Config { return replay.Config{Seed: 2, EagerLimit: 1} },
		func() replay.Config { return replay.Config{Seed: 3, Faults: faults.NewPlan(specs, 3)} },
		func() replay.Config { return replay.Config{Seed: 4, Faults: faults.NewPlan(specs, 4)} },
	} {
		want, err := replay.Replay(evs.Source(), replay.WithoutForecasts(cfg()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := replay.Replay(evs.Source(), cfg())
		if err != nil {
			t.Fatal(err)
		}
		if g, w := outcomeText(got), outcomeText(want); g != w {
			t.Errorf("config %d: with forecasts\n%s\nwithout\n%s", i, g, w)
		}
		seen[outcomeText(got)] = true
		if !got.Stuck {
			t.Errorf("config %d: not stuck; rank 0's receive of tag 4 has no sender", i)
		}
	}
	if len(seen) < 4 {
		t.Errorf("the 5 replays have %d distinct outcomes: the comparison would not see a change of matching order", len(seen))
	}
}

// A Source that hands out one event at a time (Next alone: a program's
// own, or torch's NCCL conversion) replays as the in-memory one that hands
// out runs does: the driver reads it a run at a time too (runSource), to
// see a rank's next posts and forecast them to the engine. Under no fault,
// mutate (which reads sends' Done events), eager 1 and delays, and check.
func TestPlainSourceReplaysAsEvents(t *testing.T) {
	for name, evs := range map[string]replay.Events{
		"ring":           writeRing(t, t.TempDir()+"/ring", 8, 30, -1),
		"waitany":        waitanyRaceTrace(),
		"index":          waitanyIndexTrace(),
		"probe":          probeRaceTrace(false, false),
		"exchange":       exchangeTrace(12, false),
		"exchange stuck": exchangeTrace(12, true),
	} {
		plain := func() replay.Source { return struct{ replay.Source }{evs.Source()} }
		report := sourcesReplayAlike(t, name, "plain source", evs.Source, plain,
			[]replay.Config{{}, {Seed: 1, Faults: mutateOnly{}}, {Seed: 2, EagerLimit: 1}, {Seed: 3, Latency: 5000}})
		if name == "exchange stuck" && report == "" {
			t.Errorf("%s: check found nothing", name)
		}
	}
}
