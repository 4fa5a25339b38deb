package replay_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// bsendOverflow: rank 0 attaches room for one 32-byte message and sends
// two before rank 1, after a barrier, receives them.
func bsendOverflow(r *gpu.Rank) error {
	b := r.Alloc(gpu.Int32, 8)
	if r.ID() == 1 {
		if err := r.Barrier(); err != nil {
			return err
		}
		if _, err := r.Recv(b, 0, 0); err != nil {
			return err
		}
		_, err := r.Recv(b, 0, 1)
		return err
	}
	if err := r.BufferAttach(32); err != nil {
		return err
	}
	for tag := range 2 {
		if err := r.Bsend(b, 1, tag); err != nil {
			return err
		}
	}
	if err := r.Barrier(); err != nil {
		return err
	}
	_, err := r.BufferDetach()
	return err
}

// kindsOf lists the kinds of an outcome's problems.
func kindsOf(out *replay.Outcome) []verdict.Kind {
	var ks []verdict.Kind
	for _, p := range out.Problems {
		ks = append(ks, p.Kind)
	}
	return ks
}

// TestReplayBufferAttach: a Go trace records Buffer_attach (Count the
// bytes) and Buffer_detach, and its replay finds what the live run found:
// the second Bsend does not fit (the doors agree).
func TestReplayBufferAttach(t *testing.T) {
	_, ev := record(t, 2, bsendOverflow)
	var attach, detach int
	for _, e := range ev[0] {
		switch {
		case e.Kind == trace.KindPost && e.Op == trace.OpBufferAttach && e.Count == 32:
			attach++
		case e.Kind == trace.KindPost && e.Op == trace.OpBufferDetach:
			detach++
		}
	}
	if attach != 1 || detach != 1 {
		t.Fatalf("rank 0 recorded %d Buffer_attach of 32 bytes and %d Buffer_detach, want 1 and 1", attach, detach)
	}
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if ks := kindsOf(out); len(ks) != 1 || ks[0] != verdict.BsendBuffer || out.Problems[0].Ops[0].Tag != 1 {
		t.Fatalf("problems %+v: want one bsend-buffer at the tag-1 Bsend", out.Problems)
	}
}

// TestReplayBsendNoAttachNeedsTheFlag: a trace whose Bsend has no attach
// is judged as before unless its header says attaches are recorded
// (BsendOverhead, an MPI trace of this version): then it is a
// bsend-buffer, with the overhead in what it needs.
func TestReplayBsendNoAttachNeedsTheFlag(t *testing.T) {
	_, ev := record(t, 2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 8)
		if r.ID() == 1 {
			_, err := r.Recv(b, 0, 0)
			return err
		}
		return r.Bsend(b, 1, 0)
	})
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10})
	if err != nil || len(out.Problems) != 0 {
		t.Fatalf("no flag: %v, problems %+v; want clean", err, out.Problems)
	}
	out, err = replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10, BsendOverhead: 128})
	if err != nil {
		t.Fatal(err)
	}
	if ks := kindsOf(out); len(ks) != 1 || ks[0] != verdict.BsendBuffer {
		t.Fatalf("flag: problems %+v; want one bsend-buffer", out.Problems)
	}
}

// TestReplayDetachDeadlock: rank 0 detaches before the barrier after which
// rank 1 receives its buffered message: the detach waits on rank 1, rank 1
// on rank 0's barrier: a deadlock, live and replayed.
func TestReplayDetachDeadlock(t *testing.T) {
	fn := func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 8)
		if r.ID() == 1 {
			if err := r.Barrier(); err != nil {
				return err
			}
			_, err := r.Recv(b, 0, 0)
			return err
		}
		if err := r.BufferAttach(64); err != nil {
			return err
		}
		if err := r.Bsend(b, 1, 0); err != nil {
			return err
		}
		if _, err := r.BufferDetach(); err != nil {
			return err
		}
		return r.Barrier()
	}
	_, ev := record(t, 2, fn)
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if ks := kindsOf(out); len(ks) != 1 || ks[0] != verdict.Deadlock || out.Problems[0].Ops[0].Kind != trace.OpBufferDetach {
		t.Fatalf("problems %+v; want a deadlock of rank 0's Buffer_detach", out.Problems)
	}
}
