package replay_test

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// peakHeap samples the live heap every few milliseconds until stop is
// called, which returns the largest sample less the heap live at the start
// (after a collection): the memory a benchmark's operation held at its
// peak beside its input, not what it allocated in all.
func peakHeap() (stop func() uint64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	start := s[0].Value.Uint64()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak - min(peak, start)
	}
}

// countEvents counts the events of a source.
func countEvents(b *testing.B, src replay.Source) int64 {
	var n int64
	var ev trace.Event
	for r := range src.Ranks() {
		for src.Next(r, &ev) {
			n++
		}
	}
	if err := src.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkCheckRecordedRing is p2ptrace check of the recorded ring of
// 1024 ranks and 163 iterations (about 1M events), on one worker and on
// GOMAXPROCS: the time, and the peak live heap per event.
func BenchmarkCheckRecordedRing(b *testing.B) {
	path := recordedRing(b)
	tr, err := replay.OpenTrace(path)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	src, err := tr.Open()
	if err != nil {
		b.Fatal(err)
	}
	events := countEvents(b, src)
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			stop := peakHeap()
			for b.Loop() {
				if _, err := replay.CheckTrace(tr, replay.CheckOptions{Workers: workers, NoRerun: "a benchmark"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(stop())/float64(events), "peak-heap-B/event")
			b.ReportMetric(float64(events), "events")
		})
	}
}

// BenchmarkCheckAnySource is check of a recorded gather at 64 and 256
// ranks: rank 0 receives from AnySource once per other rank, round after
// round, so every receive has ranks-2 alternatives and the forced replays
// reach their cap. The rounds keep about 100k events at both sizes: a cost
// linear in events is the same ns/event at both.
func BenchmarkCheckAnySource(b *testing.B) {
	for _, ranks := range []int{64, 256} {
		b.Run(fmt.Sprintf("ranks=%d", ranks), func(b *testing.B) {
			rounds := 100_000 / (4 * (ranks - 1))
			c := replay.NewCollector()
			if err := gpu.Launch(ranks, gatherRounds(rounds), gpu.RecordTo(c)); err != nil {
				b.Fatal(err)
			}
			ev := c.Events(ranks)
			events := countEvents(b, ev.Source())
			open := func() (replay.Source, error) { return ev.Source(), nil }
			stop := peakHeap()
			var replays int
			for b.Loop() {
				res, err := replay.Check(open, c.Config(), c.Site, replay.CheckOptions{NoRerun: "a benchmark",
					Progress: func(_, total int) { replays = total }})
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Findings) != 0 || !res.AnySource.CutShort {
					b.Fatalf("findings %v, enumeration %+v: want none, cut short", res.Findings, res.AnySource)
				}
			}
			b.ReportMetric(float64(stop())/float64(events), "peak-heap-B/event")
			b.ReportMetric(float64(events), "events")
			b.ReportMetric(float64(replays), "replays")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events)/float64(replays), "ns/event-replayed")
		})
	}
}

// gatherRounds: every round, each rank but 0 sends rank 0 one message, and
// rank 0 receives them from AnySource; a barrier ends the round.
func gatherRounds(rounds int) func(*gpu.Rank) error {
	return func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Int32, 4)
		for range rounds {
			if r.ID() == 0 {
				for range r.Size() - 1 {
					if _, err := r.Recv(buf, gpu.AnySource, 0); err != nil {
						return err
					}
				}
			} else if err := r.Send(buf, 0, 0); err != nil {
				return err
			}
			if err := r.Barrier(); err != nil {
				return err
			}
		}
		return nil
	}
}
