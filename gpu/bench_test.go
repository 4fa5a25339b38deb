package gpu_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu"
)

// BenchmarkSmallMessages measures runtime calls per second on the code
// driver: a ping-pong of 16-byte messages, every Send and Recv a call.
func BenchmarkSmallMessages(b *testing.B) {
	b.ReportAllocs()
	b.ResetTimer()
	pingpongCalls(b, b.N, 16)
	calls := float64(4 * b.N)
	b.ReportMetric(calls/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/calls, "ns/call")
}

// BenchmarkNonblockingSmall measures calls per second when ranks rarely
// block: Isend/Irecv/Waitall rounds of an 8-rank ring.
func BenchmarkNonblockingSmall(b *testing.B) {
	n := b.N
	const ranks = 8
	b.ReportAllocs()
	b.ResetTimer()
	err := gpu.Launch(ranks, func(r *gpu.Rank) error {
		s, d := r.Alloc(gpu.Float32, 4), r.Alloc(gpu.Float32, 4)
		next, prev := (r.ID()+1)%ranks, (r.ID()+ranks-1)%ranks
		for range n {
			qs, err := r.Isend(s, next, 0)
			if err != nil {
				return err
			}
			qr, err := r.Irecv(d, prev, 0)
			if err != nil {
				return err
			}
			if err := r.Waitall(qs, qr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	calls := float64(3 * ranks * n)
	b.ReportMetric(calls/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkTransfer1MiB measures copy-bound throughput of 1 MiB rendezvous transfers.
func BenchmarkTransfer1MiB(b *testing.B) {
	const size = 1 << 20
	n := b.N
	b.SetBytes(size)
	b.ResetTimer()
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Uint8, size)
		for range n {
			if r.ID() == 0 {
				if err := r.Send(buf, 1, 0); err != nil {
					return err
				}
			} else if _, err := r.Recv(buf, 0, 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
