package replay_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// exchangeTrace is an all-to-all of n ranks: each Isends to every other,
// Irecvs from every other (from AnySource every fifth), and waits for all
// of them in one Waitall, longer than a run of events a source hands out;
// with stuck, rank 0 also receives a message nobody sends.
func exchangeTrace(n int, stuck bool) replay.Events {
	ranks := make([][]trace.Event, n)
	for r := range n {
		var reqs []uint64
		add := func(e trace.Event) {
			e.Req = uint64(len(reqs) + 1)
			e.Dtype, e.Count, e.Bytes = trace.Uint8, 8, 8
			reqs = append(reqs, e.Req)
			ranks[r] = append(ranks[r], e)
		}
		for k := 1; k < n; k++ {
			add(trace.Event{Op: trace.OpIsend, Peer: int32((r + k) % n), Tag: 3})
		}
		for k := 1; k < n; k++ {
			peer := int32((r - k + n) % n)
			if k%5 == 0 {
				peer = trace.AnySource
			}
			add(trace.Event{Op: trace.OpIrecv, Peer: peer, Tag: 3})
		}
		if stuck && r == 0 {
			add(trace.Event{Op: trace.OpIrecv, Peer: 1, Tag: 4})
		}
		ranks[r] = append(ranks[r], trace.Event{Op: trace.OpWaitall, Reqs: reqs})
	}
	return mpiTrace(ranks...)
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
		for _, cfg := range []replay.Config{{}, {Seed: 1, Faults: mutateOnly{}}, {Seed: 2, EagerLimit: 1}, {Seed: 3, Latency: 5000}} {
			want, err := replay.Replay(evs.Source(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := replay.Replay(plain(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := outcomeText(got), outcomeText(want); g != w {
				t.Errorf("%s under %+v: plain source\n%s\nevents\n%s", name, cfg, g, w)
			}
		}
		check := func(open replay.Opener) string {
			res, err := replay.Check(open, replay.Config{}, siteName, replay.CheckOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			var s string
			for _, f := range res.Findings {
				s += f.Text(1) + "\n"
			}
			return s
		}
		want := check(func() (replay.Source, error) { return evs.Source(), nil })
		if got := check(func() (replay.Source, error) { return plain(), nil }); got != want {
			t.Errorf("%s: check over the plain source\n%s\nover the events\n%s", name, got, want)
		}
		if name == "exchange stuck" && want == "" {
			t.Errorf("%s: check found nothing", name)
		}
	}
}
