package trace_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Run with: go test ./recorder/trace -run '^$' -bench . -benchtime 1x (or more)

func BenchmarkAppend(b *testing.B) {
	evs := ring(8, 64) // small enough to stay in cache, as a recorder's event does
	path := filepath.Join(b.TempDir(), "bench.p2ptrace")
	w, err := trace.Create(path, trace.Header{WorldSize: 8}, trace.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		w.Append(&evs[i%len(evs)])
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		b.Fatal(err)
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(el.Nanoseconds())/float64(b.N), "ns/event")
	b.ReportMetric(float64(b.N)/el.Seconds(), "events/s")
}

func BenchmarkBytesPerEvent(b *testing.B) {
	const n = 1 << 20
	evs := ring(8, n/6/8)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		path := filepath.Join(b.TempDir(), "bench.p2ptrace")
		w, err := trace.Create(path, trace.Header{WorldSize: 8}, trace.WriterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for j := range evs {
			w.Append(&evs[j])
		}
		if err := w.Close(trace.StatusComplete, ""); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(fi.Size())/float64(len(evs)), "bytes/event")
		// bbolt grows its file in steps; the pages in use:
		db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		db.View(func(tx *bolt.Tx) error {
			b.ReportMetric(float64(tx.Size())/float64(len(evs)), "used-bytes/event")
			return nil
		})
		db.Close()
		b.ReportMetric(float64(len(evs)), "events")
	}
}

func BenchmarkRead(b *testing.B) {
	evs := ring(8, 1<<13)
	path := filepath.Join(b.TempDir(), "bench.p2ptrace")
	w, err := trace.Create(path, trace.Header{WorldSize: 8}, trace.WriterOptions{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	for j := range evs {
		w.Append(&evs[j])
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		b.Fatal(err)
	}
	r, err := trace.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var ev trace.Event
	total := 0
	for total < b.N {
		for rank := 0; rank < r.Ranks() && total < b.N; rank++ {
			c := r.Rank(rank)
			for c.Next(&ev) {
				total++
			}
			if err := c.Err(); err != nil {
				b.Fatal(err)
			}
		}
	}
	el := time.Since(start)
	b.ReportMetric(float64(el.Nanoseconds())/float64(total), "ns/event")
	b.ReportMetric(float64(total)/el.Seconds(), "events/s")
}
