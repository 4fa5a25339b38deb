package replay_test

import (
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// everyCall uses every op the trace driver replays; a clean program must
// replay clean, as recorded.
func everyCall(r *gpu.Rank) error {
	peer := 1 - r.ID()
	a, b := r.Alloc(gpu.Float32, 1<<18), r.Alloc(gpu.Float32, 1<<18)
	small, out := r.Alloc(gpu.Int32, 4), r.Alloc(gpu.Int32, 4)
	c, d := r.Alloc(gpu.Float32, 1<<18), r.Alloc(gpu.Float32, 1<<18) // sent while a and b receive: buffers of their own
	if err := r.Compute(time.Duration(r.ID()+1) * time.Microsecond); err != nil {
		return err
	}
	// Test loop on an Irecv.
	q, err := r.Irecv(small, peer, 1)
	if err != nil {
		return err
	}
	if err := r.Ssend(out, peer, 1); err != nil && r.ID() == 0 {
		return err
	}
	for {
		ok, _, err := r.Test(q)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		if err := r.Compute(time.Microsecond); err != nil {
			return err
		}
	}
	// Waitany over two receives, Testall over two sends.
	q1, _ := r.Irecv(a, peer, 2)
	q2, _ := r.Irecv(b, peer, 3)
	s1, _ := r.Isend(c, peer, 3)
	s2, _ := r.Issend(d, peer, 2)
	for range 2 {
		if _, _, err := r.Waitany(q1, q2); err != nil {
			return err
		}
	}
	for {
		ok, err := r.Testall(s1, s2)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		if err := r.Compute(time.Microsecond); err != nil {
			return err
		}
	}
	// Sendrecv, Bsend/Recv.
	if _, err := r.Sendrecv(a, peer, 4, b, peer, 4); err != nil {
		return err
	}
	if err := r.Bsend(small, peer, 5); err != nil {
		return err
	}
	if _, err := r.Recv(small, gpu.AnySource, 5); err != nil {
		return err
	}
	// Streams with a group, and a second stream.
	st, st2 := r.Stream(), r.NewStream()
	r.GroupStart()
	st.Send(a, peer)
	st.Recv(b, peer)
	r.GroupEnd()
	if err := st.Synchronize(); err != nil {
		return err
	}
	if r.ID() == 0 {
		st2.Send(small, peer)
	} else {
		st2.Recv(small, peer)
	}
	return st2.Synchronize()
}

func TestEveryCallReplaysAsRecorded(t *testing.T) {
	for seed := range uint64(10) {
		c := replay.NewCollector()
		if err := gpu.Launch(2, everyCall, gpu.Seed(seed), gpu.RecordTo(c)); err != nil {
			t.Fatalf("seed %d: recorded run: %v", seed, err)
		}
		ev := c.Events(2)
		out, err := replay.Replay(ev.Source(), replay.Config{Seed: seed, EagerLimit: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if fs := replay.Explain(out, c.Site, "", false, ""); len(fs) != 0 || out.Stuck {
			t.Fatalf("seed %d: %s", seed, kinds(fs))
		}
		if want := int64(len(ev[0]) + len(ev[1])); out.Events != want {
			t.Fatalf("seed %d: replayed %d events of %d", seed, out.Events, want)
		}
	}
}

// TestReplayReadsAgainAPostReadAhead: a Test without its Done event (a
// damaged or foreign trace) makes the replay read the next post while it
// looks for that Done; the post is put back and replayed next, whether the
// source keeps it in a run of the rank's events (Events, Compacted) or
// hands out one event at a time (a plain Source, read with Next). Rank 1
// computes first, so rank 0's Wait blocks and rank 1 reads its own events
// before rank 0 goes on.
func TestReplayReadsAgainAPostReadAhead(t *testing.T) {
	ev := mpiTrace(
		[]trace.Event{
			{Op: trace.OpIsend, Peer: 1, Count: 4, Bytes: 4, Req: 1},
			{Op: trace.OpTest, Reqs: []uint64{1}},
			{Op: trace.OpWait, Reqs: []uint64{1}},
		},
		[]trace.Event{
			{Op: trace.OpCompute, Duration: int64(time.Millisecond)},
			{Op: trace.OpRecv, Peer: 0, Count: 4, Bytes: 4},
		},
	)
	for name, src := range map[string]func() replay.Source{
		"events":    ev.Source,
		"compacted": ev.Compact().Source,
		"next":      func() replay.Source { return struct{ replay.Source }{ev.Source()} },
	} {
		for _, eager := range []int64{0, 1} {
			out, err := replay.Replay(src(), replay.Config{EagerLimit: eager})
			if err != nil {
				t.Fatalf("%s, eager limit %d: %v", name, eager, err)
			}
			if out.Stuck || len(out.Problems) != 0 {
				t.Fatalf("%s, eager limit %d: %+v", name, eager, out.Problems)
			}
			if out.Events != eventCount(ev) {
				t.Fatalf("%s, eager limit %d: replayed %d events of %d", name, eager, out.Events, eventCount(ev))
			}
		}
	}
}
