package replay_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/benchtrace"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// recordedRing is the recorded ring: 1024 ranks, 163 rounds, about
// 1.0M events, recorded by `p2ptrace record`'s code path (benchtrace).
func recordedRing(b *testing.B) string {
	return benchtrace.Record(b, "ring", "", "-ranks", "1024", "-iters", "163")
}

// BenchmarkReplayRecordedRingFile replays the recorded ring from its file,
// as `p2ptrace replay` does: open, decode and replay every event; "ahead"
// decodes in goroutines beside the engine (Trace.Open), "direct" on the
// replay's goroutine (Trace.OpenDirect, check's workers).
func BenchmarkReplayRecordedRingFile(b *testing.B) {
	path := recordedRing(b)
	for _, c := range []struct {
		name string
		open func(*replay.Trace) (replay.Source, error)
	}{{"ahead", (*replay.Trace).Open}, {"direct", (*replay.Trace).OpenDirect}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var events int64
			for b.Loop() {
				t, err := replay.OpenTrace(path)
				if err != nil {
					b.Fatal(err)
				}
				src, err := c.open(t)
				if err != nil {
					b.Fatal(err)
				}
				out, err := replay.Replay(src, t.Config())
				if err != nil {
					b.Fatal(err)
				}
				if out.Stuck || len(out.Problems) > 0 {
					b.Fatal(out.Problems)
				}
				events += out.Events
				t.Close()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
		})
	}
}

// BenchmarkReplayRecordedRingMemory replays the same recorded events from
// memory (loaded before the timer starts): the engine alone, the bound of
// BenchmarkReplayRecordedRingFile. "trace-events" holds them as
// trace.Events (Events, 240 bytes each, every one read), "replay-events"
// as a trace file's Source hands them to a replay (64 bytes each, without
// the Done events no replay reads: see replay.ReplayEvents).
func BenchmarkReplayRecordedRingMemory(b *testing.B) {
	path := recordedRing(b)
	t, err := replay.OpenTrace(path)
	if err != nil {
		b.Fatal(err)
	}
	cfg := t.Config()
	r := t.Reader()
	evs := make(replay.Events, r.Ranks())
	for rank := range evs {
		c := r.Rank(rank)
		var ev trace.Event
		for c.Next(&ev) {
			e := ev
			e.Reqs = append([]uint64(nil), ev.Reqs...)
			evs[rank] = append(evs[rank], e)
		}
		if err := c.Err(); err != nil {
			b.Fatal(err)
		}
	}
	short, err := replay.LoadReplayEvents(t)
	if err != nil {
		b.Fatal(err)
	}
	t.Close()
	for _, c := range []struct {
		name   string
		source func() replay.Source
	}{{"trace-events", evs.Source}, {"replay-events", short.Source}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var events int64
			for b.Loop() {
				out, err := replay.Replay(c.source(), cfg)
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
