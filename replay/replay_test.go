package replay_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu"
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
