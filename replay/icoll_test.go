package replay_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// icollEv is a nonblocking collective as the MPI recorder writes it:
// collEv's fields and the request req.
func icollEv(op trace.Op, rank, size, root int, bytes int64, site uint32, req uint64) trace.Event {
	ev := collEv(op, rank, size, root, bytes, site)
	ev.Req = req
	return ev
}

func waitEv(site uint32, reqs ...uint64) trace.Event {
	return trace.Event{Op: trace.OpWait, Reqs: reqs, Site: site}
}

// TestCheckIcollInitiationNeverBlocks is TestCheckCollectiveOrder's program
// with an MPI_Ibcast whose Wait comes last on each rank: rank 0 starts it
// and sends, rank 1 receives, then starts it. The initiation is local
// (MPI-3.1 sec. 5.12: "all calls are local and return immediately"), under
// sync too: no finding in check's whole battery.
func TestCheckIcollInitiationNeverBlocks(t *testing.T) {
	send := trace.Event{Op: trace.OpSend, Peer: 1, Bytes: 64, Count: 16, Dtype: trace.Int32, Site: 2}
	recv := trace.Event{Op: trace.OpRecv, Peer: 0, Bytes: 64, Count: 16, Dtype: trace.Int32, Site: 3}
	fs := checkEvents(t, mpiTrace(
		[]trace.Event{icollEv(trace.OpIbcast, 0, 2, 0, 64, 1, 1), send, waitEv(5, 1)},
		[]trace.Event{recv, icollEv(trace.OpIbcast, 1, 2, 0, 64, 4, 1), waitEv(6, 1)}))
	if len(fs) != 0 {
		t.Fatalf("want no findings, got %s", kinds(fs))
	}
}

// TestCheckIcollWaitSynchronizes: rank 0 waits for its Ibcast (root 0)
// before it sends; rank 1 receives before it starts its Ibcast. As
// recorded the root's request completes at once (it waits for no one);
// under sync its completion waits for every member: a deadlock of rank 0's
// Wait and rank 1's Recv, with the collectives' hint, and the Ibcast
// (named, not the Wait) is unsafe buffering.
func TestCheckIcollWaitSynchronizes(t *testing.T) {
	send := trace.Event{Op: trace.OpSend, Peer: 1, Bytes: 64, Count: 16, Dtype: trace.Int32, Site: 2}
	recv := trace.Event{Op: trace.OpRecv, Peer: 0, Bytes: 64, Count: 16, Dtype: trace.Int32, Site: 3}
	fs := checkEvents(t, mpiTrace(
		[]trace.Event{icollEv(trace.OpIbcast, 0, 2, 0, 64, 1, 1), waitEv(5, 1), send},
		[]trace.Event{recv, icollEv(trace.OpIbcast, 1, 2, 0, 64, 4, 1), waitEv(6, 1)}))
	if len(fs) != 2 || fs[0].Kind != verdict.Deadlock || fs[0].RevealedBy != "sync" || fs[1].Kind != verdict.UnsafeBuffering {
		t.Fatalf("want a deadlock and unsafe-buffering under sync, got %s", kinds(fs))
	}
	if !strings.Contains(fs[0].Hint, "collectives did not synchronize") || !slices.Equal(fs[0].Cycle, []int{0, 1, 0}) {
		t.Errorf("deadlock: cycle %v, hint %q", fs[0].Cycle, fs[0].Hint)
	}
	if text := fs[1].Text(2); !strings.Contains(text, "rank 0: Ibcast root 0 (64 bytes) completes only if the collective does not synchronize (it waits for rank 1)") ||
		!strings.Contains(text, "at main.go:1") {
		t.Errorf("unsafe-buffering does not name the Ibcast at main.go:1:\n%s", text)
	}
}
