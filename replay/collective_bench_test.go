package replay_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// collectiveTrace is ranks x iters rounds of ops (each a collective on the
// world with root 1 where it has one), a compute of up to 4 us before each
// so that ranks enter in different orders.
func collectiveTrace(ranks, iters int, ops ...trace.Op) replay.Events {
	evs := make([][]trace.Event, ranks)
	for r := range ranks {
		for i := range iters {
			for j, op := range ops {
				evs[r] = append(evs[r], trace.Event{Op: trace.OpCompute, Duration: int64((r*7+i*3+j)%5) * 1000},
					collEv(op, r, ranks, 1, 64, 1))
			}
		}
	}
	return mpiTrace(evs...)
}

// BenchmarkReplayCollectives replays synthetic traces of collectives from
// memory: Barrier alone (256 ranks x 400: 102,400 calls, what the engine
// did before the other collectives), and Bcast, Allreduce, Reduce and Scan
// at 1024 ranks (x 25: 102,400 calls; each rule's cost per call must not
// grow with the ranks).
func BenchmarkReplayCollectives(b *testing.B) {
	for _, c := range []struct {
		name         string
		ranks, iters int
		ops          []trace.Op
	}{
		{"Barrier256", 256, 400, []trace.Op{trace.OpBarrier}},
		{"Mixed1024", 1024, 25, []trace.Op{trace.OpBcast, trace.OpAllreduce, trace.OpReduce, trace.OpScan}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ev := collectiveTrace(c.ranks, c.iters, c.ops...)
			b.ResetTimer()
			for range b.N {
				out, err := replay.Replay(ev.Source(), replay.Config{})
				if err != nil || out.Stuck || len(out.Problems) != 0 {
					b.Fatalf("%v %+v", err, out.Problems)
				}
			}
		})
	}
}
