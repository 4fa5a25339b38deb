package replay_test

import (
	"github.com/p2ptrace/p2ptrace/verdict"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// doneAfter inserts Done events into a rank's events (built by mpiTrace)
// right after the post of call seq.
func doneAfter(evs []trace.Event, seq uint64, done ...trace.Event) []trace.Event {
	var out []trace.Event
	for _, e := range evs {
		out = append(out, e)
		if e.Kind == trace.KindPost && e.Seq == seq {
			for _, d := range done {
				d.Kind, d.Rank = trace.KindDone, e.Rank
				out = append(out, d)
			}
		}
	}
	return out
}

func eventCount(ev replay.Events) int64 {
	var n int
	for _, r := range ev {
		n += len(r)
	}
	return int64(n)
}

// waitanyIndexTrace: rank 0 got the receive from rank 2 out of its
// Waitany when recorded (Index 1), then waited for the other one.
func waitanyIndexTrace() replay.Events {
	ev := mpiTrace(
		[]trace.Event{
			{Op: trace.OpIrecv, Peer: 1, Count: 4, Bytes: 4, Req: 1},
			{Op: trace.OpIrecv, Peer: 2, Count: 4, Bytes: 4, Req: 2},
			{Op: trace.OpWaitany, Reqs: []uint64{1, 2}, Site: 3},
			{Op: trace.OpWait, Reqs: []uint64{1}},
		},
		[]trace.Event{{Op: trace.OpSend, Peer: 0, Count: 4, Bytes: 4}},
		[]trace.Event{
			{Op: trace.OpCompute, Duration: int64(time.Millisecond)},
			{Op: trace.OpSend, Peer: 0, Count: 4, Bytes: 4},
		},
	)
	ev[0] = doneAfter(ev[0], 2,
		trace.Event{Seq: 1, Op: trace.OpIrecv, MatchRank: 2, MatchSeq: 1}, // completed inside the Waitany
		trace.Event{Seq: 2, Op: trace.OpWaitany, Index: 1, MatchRank: trace.NoRank})
	return ev
}

func TestReplayWaitanyFollowsRecordedIndex(t *testing.T) {
	// Rank 0 got the receive from rank 2 out of its Waitany when recorded
	// (Index 1), then waited for the other one. In the replay rank 2 sends
	// last: the Waitany must still retire that request, not rank 1's.
	ev := waitanyIndexTrace()
	out, err := replay.Replay(ev.Source(), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stuck || len(out.Problems) != 0 {
		t.Fatalf("%+v", out.Problems)
	}
	if out.Events != eventCount(ev) {
		t.Fatalf("replayed %d events of %d", out.Events, eventCount(ev))
	}
}

// waitanyRaceTrace: rank 0 posts two AnySource Irecvs and waits for any;
// when recorded the first took rank 2's send and the second rank 1's, and
// the first's Done comes after the Waitany's post (read ahead).
func waitanyRaceTrace() replay.Events {
	ev := mpiTrace(
		[]trace.Event{
			{Op: trace.OpIrecv, Peer: trace.AnySource, Count: 4, Bytes: 4, Req: 1},
			{Op: trace.OpIrecv, Peer: trace.AnySource, Count: 4, Bytes: 4, Req: 2},
			{Op: trace.OpWaitany, Reqs: []uint64{1, 2}},
			{Op: trace.OpWait, Reqs: []uint64{2}},
		},
		[]trace.Event{
			{Op: trace.OpCompute, Duration: int64(time.Millisecond)},
			{Op: trace.OpSend, Peer: 0, Count: 4, Bytes: 4},
		},
		[]trace.Event{
			{Op: trace.OpCompute, Duration: int64(2 * time.Millisecond)},
			{Op: trace.OpSend, Peer: 0, Count: 4, Bytes: 4},
		},
	)
	ev[0] = doneAfter(ev[0], 2,
		trace.Event{Seq: 0, Op: trace.OpIrecv, MatchRank: 2, MatchSeq: 1},
		trace.Event{Seq: 2, Op: trace.OpWaitany, Index: 0, MatchRank: trace.NoRank})
	ev[0] = doneAfter(ev[0], 3, trace.Event{Seq: 1, Op: trace.OpIrecv, MatchRank: 1, MatchSeq: 1})
	return ev
}

func TestReplayWaitanyReadAheadKeepsRaces(t *testing.T) {
	// Both receives are AnySource. When recorded the first took rank 1's
	// send and the second rank 2's; the replay swaps them (rank 1 sends
	// late). The first receive's Done is read ahead, to find the Waitany's,
	// before the replay completed it: its race must still be reported.
	ev := waitanyRaceTrace()
	out, err := replay.Replay(ev.Source(), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stuck || len(out.Problems) != 0 {
		t.Fatalf("%+v", out.Problems)
	}
	if len(out.Races) != 2 {
		t.Fatalf("races %+v, want both receives", out.Races)
	}
	for _, r := range out.Races {
		if r.ReplayRank == r.RecordedRank {
			t.Fatalf("race %+v", r)
		}
	}
}

// waitanyProgram: rank 0 receives from ranks 1 and 2 with a Waitany, then
// waits for the other request.
func waitanyProgram(r *gpu.Rank) error {
	buf := r.Alloc(gpu.Int32, 4)
	if r.ID() != 0 {
		if err := r.Compute(time.Duration(r.ID()) * time.Microsecond); err != nil {
			return err
		}
		return r.Send(buf, 0, 0)
	}
	other := r.Alloc(gpu.Int32, 4)
	q1, err := r.Irecv(buf, 1, 0)
	if err != nil {
		return err
	}
	q2, err := r.Irecv(other, 2, 0)
	if err != nil {
		return err
	}
	i, _, err := r.Waitany(q1, q2)
	if err != nil {
		return err
	}
	_, err = r.Wait([]*gpu.Request{q2, q1}[i])
	return err
}

func TestReplayWaitanyUnderDelayHasNoFalseMissingWait(t *testing.T) {
	c := replay.NewCollector()
	if err := gpu.Launch(3, waitanyProgram, gpu.RecordTo(c)); err != nil {
		t.Fatal(err)
	}
	ev := c.Events(3)
	specs, err := faults.ParseAll([]string{"delay"})
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(40) {
		out, err := replay.Replay(ev.Source(), replay.Config{Seed: seed, EagerLimit: 64 << 10, Faults: faults.NewPlan(specs, seed)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Stuck {
			t.Fatalf("seed %d: stuck", seed)
		}
		for _, p := range out.Problems {
			if p.Kind == verdict.MissingWait {
				t.Fatalf("seed %d: %s", seed, p.Message)
			}
		}
		if out.Events != eventCount(ev) {
			t.Fatalf("seed %d: replayed %d events of %d", seed, out.Events, eventCount(ev))
		}
	}
}

// A Test whose Done event is missing (a damaged or foreign trace: the
// recorders write it right after the post) answers "not yet", and the
// calls after it still replay: the Wait completes the receive. Reading
// ahead for the Done must not swallow the rank's later calls.
func TestReplayTestWithoutDoneKeepsLaterCalls(t *testing.T) {
	ev := mpiTrace(
		[]trace.Event{
			{Op: trace.OpIrecv, Peer: 1, Count: 4, Bytes: 4, Req: 1},
			{Op: trace.OpTest, Reqs: []uint64{1}}, // its Done is missing
			{Op: trace.OpWait, Reqs: []uint64{1}},
		},
		[]trace.Event{{Op: trace.OpSend, Peer: 0, Count: 4, Bytes: 4}},
	)
	out, err := replay.Replay(ev.Source(), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stuck || len(out.Problems) != 0 || len(out.Cut) != 0 {
		t.Fatalf("stuck %v, cut %v, problems %+v: want the Wait and Finalize replayed", out.Stuck, out.Cut, out.Problems)
	}
	if out.Events != eventCount(ev) {
		t.Fatalf("replayed %d events of %d", out.Events, eventCount(ev))
	}
}
