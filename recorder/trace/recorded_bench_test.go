package trace_test

import (
	"os"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/p2ptrace/p2ptrace/internal/benchtrace"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Run with: go test ./recorder/trace -run '^$' -bench Recorded -benchtime 1x

// BenchmarkRecordedRingSize reports what a recorded ring trace costs on
// disk (the "Scale" sizes): bytes/event is the file's size per
// event, data-bytes/event the encoded blocks' alone, blocks how many keys
// hold them. The trace is recorded by `p2ptrace record`'s code path
// (benchtrace), with the writer's default 100 ms timed flush: 1024 ranks
// record slowly enough that every rank's block is flushed many times.
func BenchmarkRecordedRingSize(b *testing.B) {
	for _, tc := range []struct{ name, ranks, iters string }{
		{"1024x163", "1024", "163"}, // 1.0M events
		{"8x20833", "8", "20833"},   // 1.0M events
	} {
		b.Run(tc.name, func(b *testing.B) {
			path := benchtrace.Record(b, "ring", "", "-ranks", tc.ranks, "-iters", tc.iters)
			for b.Loop() {
				traceSize(b, path)
			}
		})
	}
}

// traceSize reports the sizes of the trace at path.
func traceSize(b *testing.B, path string) {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	r, err := trace.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	events := r.Header().Events
	r.Close()
	db, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var data, blocks int64
	err = db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("ranks")).ForEachBucket(func(k []byte) error {
			return tx.Bucket([]byte("ranks")).Bucket(k).ForEach(func(_, v []byte) error {
				data += int64(len(v))
				blocks++
				return nil
			})
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(fi.Size())/float64(events), "bytes/event")
	b.ReportMetric(float64(data)/float64(events), "data-bytes/event")
	b.ReportMetric(float64(fi.Size()), "file-bytes")
	b.ReportMetric(float64(blocks), "blocks")
	b.ReportMetric(float64(events), "events")
}

// BenchmarkReadRecordedRing decodes every event of the recorded 1024x163
// ring (1.0M events) with Cursors, rank after rank: the decoding a replay
// from the file pays on top of the engine (BenchmarkReplayRecordedRing* in
// package replay).
func BenchmarkReadRecordedRing(b *testing.B) {
	path := benchtrace.Record(b, "ring", "", "-ranks", "1024", "-iters", "163")
	r, err := trace.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ReportAllocs()
	var events int64
	var ev trace.Event
	for b.Loop() {
		for rank := range r.Ranks() {
			c := r.Rank(rank)
			for c.Next(&ev) {
				events++
			}
			if err := c.Err(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}
