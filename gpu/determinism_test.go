package gpu_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/gpu/sim"
)

// eventLog records the engine's events in the order it processes them.
type eventLog struct{ b strings.Builder }

func (l *eventLog) Posted(op *sim.Op) {
	fmt.Fprintf(&l.b, "post r%d s%d %s peer=%d tag=%d t=%d\n", op.Rank, op.Seq, op.Kind, op.Peer, op.Tag, op.PostT)
}

func (l *eventLog) Completed(op *sim.Op) {
	fmt.Fprintf(&l.b, "done r%d s%d %s match=%d/%d t=%d\n", op.Rank, op.Seq, op.Kind, op.MatchRank, op.MatchSeq, op.DoneT)
}

// racy is a program whose event order depends on the seed: wildcard
// receives from three senders with equal timing, and a final hang.
func racy(r *gpu.Rank) error {
	b := r.Alloc(gpu.Int32, 64)
	if r.ID() == 0 {
		for range 3 * (r.Size() - 1) {
			if _, err := r.Recv(b, gpu.AnySource, gpu.AnyTag); err != nil {
				return err
			}
		}
		_, err := r.Recv(b, 1, 99) // never sent
		return err
	}
	for i := range 3 {
		q, err := r.Isend(b, 0, i)
		if err != nil {
			return err
		}
		if err := r.Compute(time.Duration(r.ID()%2) * time.Microsecond); err != nil {
			return err
		}
		if _, err := r.Wait(q); err != nil {
			return err
		}
	}
	return nil
}

func TestSameSeedSameEventOrder(t *testing.T) {
	orders := map[string]bool{}
	for seed := range uint64(50) {
		var logs [2]eventLog
		var errs [2]string
		for i := range logs {
			err := gpu.Launch(4, racy, gpu.Seed(seed), gpu.WithObserver(&logs[i]))
			errs[i] = fmt.Sprint(err)
		}
		if logs[0].b.String() != logs[1].b.String() {
			t.Fatalf("seed %d: event order differs between two runs", seed)
		}
		if errs[0] != errs[1] || !strings.Contains(errs[0], "hang") {
			t.Fatalf("seed %d: error text differs or is not a hang:\n%s\n---\n%s", seed, errs[0], errs[1])
		}
		orders[logs[0].b.String()] = true
	}
	if len(orders) < 2 {
		t.Fatalf("50 seeds gave one event order: the seed does not reach the scheduler")
	}
}
