package replay_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// collEv is a collective call as the MPI recorder writes it: the root's
// world rank in Peer (-1 without one), the caller's rank in the
// communicator in Tag, the communicator's size in Count.
func collEv(op trace.Op, rank, size, root int, bytes int64, site uint32) trace.Event {
	return trace.Event{Op: op, Peer: int32(root), Tag: int32(rank), Count: int64(size), Bytes: bytes, Dtype: trace.Int32, Site: site}
}

func checkEvents(t *testing.T, ev replay.Events) []replay.Finding {
	t.Helper()
	open := func() (replay.Source, error) { return ev.Source(), nil }
	res, err := replay.Check(open, replay.Config{EagerLimit: 4040}, siteName, replay.CheckOptions{NoRerun: "a test"})
	if err != nil {
		t.Fatal(err)
	}
	return res.Findings
}

// TestCheckCollectiveOrder is MPI-3.1 sec. 5.13's (Correctness) erroneous program: rank 0
// Bcasts (root 0) then sends to rank 1, which receives, then Bcasts. As
// recorded it completes (the root waits for no one); under sync (every
// collective synchronizes) it deadlocks, with a hint that says collectives
// may synchronize, and the Bcast is unsafe buffering. With rank 1's Bcast
// before its Recv, nothing.
func TestCheckCollectiveOrder(t *testing.T) {
	send := trace.Event{Op: trace.OpSend, Peer: 1, Bytes: 64, Count: 16, Dtype: trace.Int32, Site: 2}
	recv := trace.Event{Op: trace.OpRecv, Peer: 0, Bytes: 64, Count: 16, Dtype: trace.Int32, Site: 3}
	bcast := func(r int, site uint32) trace.Event { return collEv(trace.OpBcast, r, 2, 0, 64, site) }
	fs := checkEvents(t, mpiTrace([]trace.Event{bcast(0, 1), send}, []trace.Event{recv, bcast(1, 4)}))
	if len(fs) != 2 || fs[0].Kind != verdict.Deadlock || fs[0].RevealedBy != "sync" || fs[1].Kind != verdict.UnsafeBuffering {
		t.Fatalf("want a deadlock and unsafe-buffering under sync, got %s", kinds(fs))
	}
	if !strings.Contains(fs[0].Hint, "collectives did not synchronize") || !slices.Equal(fs[0].Cycle, []int{0, 1, 0}) {
		t.Errorf("deadlock: cycle %v, hint %q", fs[0].Cycle, fs[0].Hint)
	}
	text := fs[1].Text(2)
	for _, want := range []string{"rank 0: Bcast root 0 (64 bytes) completes only if the collective does not synchronize (it waits for rank 1)",
		"at main.go:1", "collectives may synchronize (MPI-3.1 sec. 5.13, Correctness)"} {
		if !strings.Contains(text, want) {
			t.Errorf("unsafe-buffering lacks %q:\n%s", want, text)
		}
	}
	if !slices.Equal(fs[1].Ranks, []int{0, 1}) {
		t.Errorf("unsafe-buffering ranks %v", fs[1].Ranks)
	}
	if fs := checkEvents(t, mpiTrace([]trace.Event{bcast(0, 1), send}, []trace.Event{bcast(1, 4), recv})); len(fs) != 0 {
		t.Errorf("fixed order: %s", kinds(fs))
	}
}

// TestCheckCollectiveMismatchOnce: Reduce against Bcast is one
// collective-mismatch however the battery's replays order the entries.
func TestCheckCollectiveMismatchOnce(t *testing.T) {
	fs := checkEvents(t, mpiTrace(
		[]trace.Event{collEv(trace.OpReduce, 0, 2, 0, 16, 1)},
		[]trace.Event{{Op: trace.OpCompute, Duration: 3000}, collEv(trace.OpBcast, 1, 2, 0, 16, 2)}))
	if len(fs) != 1 || fs[0].Kind != verdict.CollectiveMismatch || fs[0].RevealedBy != "" || !slices.Equal(fs[0].Ranks, []int{0, 1}) {
		t.Fatalf("want one collective-mismatch as recorded, got %s", kinds(fs))
	}
	if fs[0].Ops[0].Site != "main.go:1" || fs[0].Ops[1].Site != "main.go:2" {
		t.Errorf("ops %+v", fs[0].Ops)
	}
}

// TestCheckCollectiveMismatchOfFourOnce: four ranks Reduce, rank 3 to
// another root. Each member is compared with the first to enter, which the
// replays under delay change (rank 1 or 2 first: another pair of the same
// call); the call is one bug, reported once, as recorded, with its call.
func TestCheckCollectiveMismatchOfFourOnce(t *testing.T) {
	ranks := make([][]trace.Event, 4)
	for r := range ranks {
		root := 0
		if r == 3 {
			root = 1
		}
		ranks[r] = []trace.Event{collEv(trace.OpReduce, r, 4, root, 16, 1)}
	}
	fs := checkEvents(t, mpiTrace(ranks...))
	if len(fs) != 1 || fs[0].Kind != verdict.CollectiveMismatch || fs[0].RevealedBy != "" {
		t.Fatalf("want one collective-mismatch as recorded, got %s", kinds(fs))
	}
	if c := fs[0].Collective; c == nil || *c != (verdict.CollectiveCall{Comm: 0, Call: 1}) {
		t.Errorf("collective %+v, want the world's call 1", c)
	}
	if !strings.Contains(fs[0].Message, "rank 0 calls Reduce root 0 (16 bytes), rank 3 calls Reduce root 1 (16 bytes): the members name different roots (rank 0, rank 1)") {
		t.Errorf("message %q", fs[0].Message)
	}
	if !slices.Equal(fs[0].Ranks, []int{0, 3}) || len(fs[0].Ops) != 2 || fs[0].Ops[0].Site != "main.go:1" || fs[0].Ops[1].Site != "main.go:1" {
		t.Errorf("ranks %v, ops %+v: want ranks 0 and 3 at main.go:1", fs[0].Ranks, fs[0].Ops)
	}
}

// TestCheckEveryCollectiveClean: every collective kind, called by three
// ranks in the same order with the same roots and sizes (a Sendrecv ring
// between them), is clean under the whole battery, sync included; the v
// variants may differ in size.
func TestCheckEveryCollectiveClean(t *testing.T) {
	all := []trace.Op{trace.OpBarrier, trace.OpBcast, trace.OpReduce, trace.OpAllreduce, trace.OpGather, trace.OpGatherv,
		trace.OpScatter, trace.OpScatterv, trace.OpAllgather, trace.OpAllgatherv, trace.OpAlltoall, trace.OpAlltoallv,
		trace.OpReduceScatter, trace.OpReduceScatterBlock, trace.OpScan, trace.OpExscan}
	var ranks [][]trace.Event
	for r := range 3 {
		var ops []trace.Event
		for i, k := range all {
			bytes := int64(16)
			if k == trace.OpGatherv || k == trace.OpAlltoallv {
				bytes = int64(4 * (r + 1))
			}
			ops = append(ops, trace.Event{Op: trace.OpCompute, Duration: int64((r*7+i)%3) * 1000},
				collEv(k, r, 3, i%3, bytes, uint32(i+1)))
		}
		ops = append(ops, trace.Event{Op: trace.OpSendrecv, Peer: int32((r + 1) % 3), Bytes: 4, Count: 1, Dtype: trace.Int32, Site: 90},
			trace.Event{Op: trace.OpRecv, Peer: int32((r + 2) % 3), Bytes: 4, Count: 1, Dtype: trace.Int32, Site: 90})
		ranks = append(ranks, ops)
	}
	if fs := checkEvents(t, mpiTrace(ranks...)); len(fs) != 0 {
		t.Fatalf("%s\n%s", kinds(fs), fs[0].Text(1))
	}
}
