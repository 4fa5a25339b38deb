package replay_test

import (
	"math/rand/v2"
	"testing"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

func TestRingReplaysClean(t *testing.T) {
	out, err := replay.Replay(replay.RingSource(16, 50, 1024), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stuck || len(out.Problems) != 0 {
		t.Fatalf("ring: %+v", out.Problems)
	}
	if want := int64(16 * (3*50 + 1)); out.Events != want {
		t.Fatalf("events %d, want %d", out.Events, want)
	}
}

// BenchmarkReplayRing replays a synthetic 1M-event ring trace of 1024 ranks.
func BenchmarkReplayRing(b *testing.B) {
	const ranks, iters = 1024, 325 // 1024 * (3*325+1) ≈ 1.0M events
	b.ReportAllocs()
	var events int64
	for b.Loop() {
		out, err := replay.Replay(replay.RingSource(ranks, iters, 1024), replay.Config{})
		if err != nil || out.Stuck {
			b.Fatal(err, out.Problems)
		}
		events += out.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// BenchmarkReplayJitterRing replays a ring of 1024 ranks that compute for
// a random time before each round, so that few events share a time (unlike
// BenchmarkReplayRing, whose ranks run in step): the event queue works as a
// heap here. About 1.3M events, from memory.
func BenchmarkReplayJitterRing(b *testing.B) {
	const ranks, iters = 1024, 250
	rng := rand.New(rand.NewPCG(1, 1))
	ev := make(replay.Events, ranks)
	for r := range ranks {
		add := func(e trace.Event) {
			e.Kind, e.Rank, e.Seq = trace.KindPost, int32(r), uint64(len(ev[r]))
			ev[r] = append(ev[r], e)
		}
		right, left := int32((r+1)%ranks), int32((r+ranks-1)%ranks)
		for i := range uint64(iters) {
			add(trace.Event{Op: trace.OpCompute, Duration: int64(rng.IntN(5000))})
			add(trace.Event{Op: trace.OpIsend, Peer: right, Dtype: trace.Uint8, Count: 1024, Bytes: 1024, Req: 2*i + 1})
			add(trace.Event{Op: trace.OpIrecv, Peer: left, Dtype: trace.Uint8, Count: 1024, Bytes: 1024, Req: 2*i + 2})
			add(trace.Event{Op: trace.OpWaitall, Reqs: []uint64{2*i + 1, 2*i + 2}})
		}
		add(trace.Event{Op: trace.OpFinalize})
	}
	b.ReportAllocs()
	var events int64
	for b.Loop() {
		out, err := replay.Replay(ev.Source(), replay.Config{})
		if err != nil || out.Stuck || len(out.Problems) > 0 {
			b.Fatal(err, out.Problems)
		}
		events += out.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// BenchmarkExploreSmallScenario measures replay seeds per second on a small
// scenario (an AnySource race of 3 ranks) under delay, as --explore does.
func BenchmarkExploreSmallScenario(b *testing.B) {
	c := replay.NewCollector()
	err := gpu.Launch(3, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Int32, 1)
		if r.ID() != 0 {
			return r.Send(buf, 0, 0)
		}
		for range 2 {
			if _, err := r.Recv(buf, gpu.AnySource, 0); err != nil {
				return err
			}
		}
		return nil
	}, gpu.RecordTo(c))
	if err != nil {
		b.Fatal(err)
	}
	ev := c.Events(3)
	open := func() (replay.Source, error) { return ev.Source(), nil }
	specs, err := faults.ParseAll([]string{"delay"})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if _, err := replay.Explore(open, replay.Config{EagerLimit: 64 << 10}, c.Site, specs, 0, b.N, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
}
