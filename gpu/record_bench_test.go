package gpu_test

import (
	"path/filepath"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu"
)

// pingpongCalls runs n round trips of count-byte messages: 4n runtime calls.
func pingpongCalls(b *testing.B, n, count int) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Uint8, count)
		peer := 1 - r.ID()
		for range n {
			if r.ID() == 0 {
				if err := r.Send(buf, peer, 0); err != nil {
					return err
				}
				if _, err := r.Recv(buf, peer, 0); err != nil {
					return err
				}
			} else {
				if _, err := r.Recv(buf, peer, 0); err != nil {
					return err
				}
				if err := r.Send(buf, peer, 0); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func benchRecorded(b *testing.B, count int, hash string) {
	if hash != "" {
		b.Setenv(gpu.EnvTrace, filepath.Join(b.TempDir(), "bench.db"))
		b.Setenv(gpu.EnvHash, hash)
	}
	b.SetBytes(int64(4 * count))
	b.ResetTimer()
	pingpongCalls(b, b.N, count)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(4*b.N), "ns/call")
}

// Compare with benchstat: recorded against unrecorded, per small op and per 1 MiB transfer.
func BenchmarkRecordSmall(b *testing.B) {
	b.Run("unrecorded", func(b *testing.B) { benchRecorded(b, 16, "") })
	b.Run("hash=full", func(b *testing.B) { benchRecorded(b, 16, gpu.HashFull) })
}

func BenchmarkRecord1MiB(b *testing.B) {
	b.Run("unrecorded", func(b *testing.B) { benchRecorded(b, 1<<20, "") })
	b.Run("hash=full", func(b *testing.B) { benchRecorded(b, 1<<20, gpu.HashFull) })
	b.Run("hash=sample", func(b *testing.B) { benchRecorded(b, 1<<20, gpu.HashSample) })
	b.Run("hash=off", func(b *testing.B) { benchRecorded(b, 1<<20, gpu.HashOff) })
}
