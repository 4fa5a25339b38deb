package replay_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/internal/benchtrace"
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

// allToAllSource is the trace of testdata/train/alltoall without its Done
// events, generated as it is read: every iteration each rank Isends to every
// other rank (tag: the iteration), Irecvs from every other rank, then waits
// for all 2*(ranks-1) requests. A rank holds up to ranks-1 posted receives
// and as many unexpected sends at once, from ranks-1 sources: what the
// engine's matching index is for.
type allToAllSource struct {
	ranks, iters int
	pos          []int // the next event of each rank
}

func newAllToAll(ranks, iters int) *allToAllSource {
	return &allToAllSource{ranks: ranks, iters: iters, pos: make([]int, ranks)}
}

func (s *allToAllSource) Ranks() int { return s.ranks }
func (s *allToAllSource) Err() error { return nil }

// events is the number of events the source yields.
func (s *allToAllSource) events() int64 {
	return int64(s.ranks) * int64(s.iters*(2*s.ranks-1)+1)
}

func (s *allToAllSource) Next(r int, ev *trace.Event) bool {
	n := s.ranks
	per := 2*n - 1 // events of a rank per iteration
	p := s.pos[r]
	if p > s.iters*per {
		return false
	}
	s.pos[r]++
	reqs := ev.Reqs[:0]
	*ev = trace.Event{Kind: trace.KindPost, Rank: int32(r), Seq: uint64(p), Reqs: reqs} // (the caller's buffer, reused like a trace reader's)
	if p == s.iters*per {
		ev.Op = trace.OpFinalize
		return true
	}
	it, k := p/per, p%per
	base := uint64(it * (per - 1)) // request ids grow like the runtime's
	ev.Tag = int32(it)
	ev.Dtype, ev.Count, ev.Bytes = trace.Uint8, 64, 64
	switch {
	case k < n-1:
		ev.Op, ev.Peer, ev.Req = trace.OpIsend, int32((r+k+1)%n), base+uint64(k)+1
	case k < per-1:
		j := k - (n - 1)
		ev.Op, ev.Peer, ev.Req = trace.OpIrecv, int32((r-j-1+n)%n), base+uint64(k)+1
	default:
		ev.Op, ev.Tag, ev.Dtype, ev.Count, ev.Bytes = trace.OpWaitall, 0, trace.DtypeNone, 0, 0
		for id := base + 1; id < base+uint64(per); id++ {
			reqs = append(reqs, id)
		}
		ev.Reqs = reqs
	}
	return true
}

func TestAllToAllReplaysClean(t *testing.T) {
	src := newAllToAll(9, 3)
	out, err := replay.Replay(src, replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stuck || len(out.Problems) != 0 {
		t.Fatalf("all-to-all: %+v", out.Problems)
	}
	if want := src.events(); out.Events != want {
		t.Fatalf("events %d, want %d", out.Events, want)
	}
}

// BenchmarkReplayAllToAll replays synthetic all-to-all traces (see
// allToAllSource) of 64, 256 and 1024 ranks, about 1M events each (2.1M at
// 1024 ranks: one iteration), from memory.
func BenchmarkReplayAllToAll(b *testing.B) {
	for _, c := range []struct{ ranks, iters int }{{64, 128}, {256, 8}, {1024, 1}} {
		b.Run(fmt.Sprintf("ranks=%d", c.ranks), func(b *testing.B) {
			b.ReportAllocs()
			var events int64
			for b.Loop() {
				src := newAllToAll(c.ranks, c.iters)
				out, err := replay.Replay(src, replay.Config{})
				if err != nil {
					b.Fatal(err)
				}
				if out.Stuck || len(out.Problems) > 0 {
					b.Fatal(out.Problems)
				}
				events += out.Events
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
		})
	}
}

// benchRecorded replays a trace recorded by benchtrace (see
// internal/benchtrace) b.N times.
func benchRecorded(b *testing.B, path string) {
	tr, err := replay.OpenTrace(path)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	b.ReportAllocs()
	var events int64
	for b.Loop() {
		src, err := tr.Open()
		if err != nil {
			b.Fatal(err)
		}
		out, err := replay.Replay(src, tr.Config())
		if err != nil {
			b.Fatal(err)
		}
		if out.Stuck || len(out.Problems) > 0 {
			b.Fatal(out.Problems)
		}
		events += out.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// BenchmarkReplayRecordedRing replays a recorded ring of 1024 ranks (about
// 1M events, Done events included) from its trace file.
func BenchmarkReplayRecordedRing(b *testing.B) {
	benchRecorded(b, recordedRing(b))
}

// BenchmarkReplayRecordedAllToAll replays recorded runs of
// testdata/train/alltoall from their trace files: 256 ranks, 4 iterations
// (about 1M events, Done events included), and 1024 ranks, 1 iteration
// (about 4.2M events).
func BenchmarkReplayRecordedAllToAll(b *testing.B) {
	for _, c := range []struct{ ranks, iters int }{{256, 4}, {1024, 1}} {
		b.Run(fmt.Sprintf("ranks=%d", c.ranks), func(b *testing.B) {
			benchRecorded(b, benchtrace.Record(b, "alltoall", "", "-ranks", fmt.Sprint(c.ranks), "-iters", fmt.Sprint(c.iters), "-bytes", "8"))
		})
	}
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
		if err != nil {
			b.Fatal(err)
		}
		if out.Stuck || len(out.Problems) > 0 {
			b.Fatal(out.Problems)
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
