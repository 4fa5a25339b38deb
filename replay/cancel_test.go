package replay_test

import (
	"errors"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// cancelUnmatched: rank 0 cancels a receive nobody sends to and an
// AnySource receive posted before any message could come, waits for both
// (both say cancelled), then receives rank 1's message, sent after a
// barrier. A correct program (MPI_Cancel's idiom).
func cancelUnmatched(r *gpu.Rank) error {
	b := r.Alloc(gpu.Int32, 8)
	if r.ID() == 1 {
		if err := r.Barrier(); err != nil {
			return err
		}
		return r.Send(b, 0, 7)
	}
	for _, src := range []int{1, gpu.AnySource} {
		q, err := r.Irecv(b, src, 7+92*(src&1))
		if err != nil {
			return err
		}
		if err := q.Cancel(); err != nil {
			return err
		}
		st, err := r.Wait(q)
		if err != nil {
			return err
		}
		if !st.Cancelled || st.Source >= 0 {
			return errors.New("the receive was not cancelled")
		}
	}
	if err := r.Barrier(); err != nil {
		return err
	}
	_, err := r.Recv(b, 1, 7)
	return err
}

// cancelMatched: rank 0 cancels a receive that rank 1's synchronous send
// matched before the barrier both pass: the cancel fails, the data arrives.
func cancelMatched(r *gpu.Rank) error {
	b := r.Alloc(gpu.Int32, 8)
	if r.ID() == 1 {
		if err := r.Ssend(b, 0, 5); err != nil {
			return err
		}
		return r.Barrier()
	}
	q, err := r.Irecv(b, 1, 5)
	if err != nil {
		return err
	}
	if err := r.Barrier(); err != nil {
		return err
	}
	if err := q.Cancel(); err != nil {
		return err
	}
	st, err := r.Wait(q)
	if err != nil {
		return err
	}
	if st.Cancelled || st.Source != 1 {
		return errors.New("the matched receive was cancelled")
	}
	return nil
}

// TestCheckCancelledRecvIsClean: the Go runtime runs the cancel idiom clean,
// its trace records the Cancel and the cancelled receives, and check (as
// recorded, sync, mutate, delay, the AnySource alternatives: the cancelled
// AnySource receive has none) finds nothing. Before MPI_Cancel was modelled
// the replay saw a Wait on a receive nobody sends to: a deadlock.
func TestCheckCancelledRecvIsClean(t *testing.T) {
	for name, fn := range map[string]func(*gpu.Rank) error{"unmatched": cancelUnmatched, "matched": cancelMatched} {
		t.Run(name, func(t *testing.T) {
			if err := gpu.Launch(2, fn); err != nil {
				t.Fatalf("live run: %v", err)
			}
			c, ev := record(t, 2, fn)
			var cancels, cancelled int
			for _, e := range ev[0] {
				switch {
				case e.Kind == trace.KindPost && e.Op == trace.OpCancel:
					cancels++
				case e.Kind == trace.KindDone && e.Op == trace.OpIrecv && e.Flag:
					cancelled++
				}
			}
			if want := map[string][2]int{"unmatched": {2, 2}, "matched": {1, 0}}[name]; cancels != want[0] || cancelled != want[1] {
				t.Fatalf("rank 0 recorded %d Cancel and %d cancelled receives, want %d and %d", cancels, cancelled, want[0], want[1])
			}
			open := func() (replay.Source, error) { return ev.Source(), nil }
			res, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Findings) != 0 || res.AnySource.Receives != 0 {
				t.Fatalf("findings %s, AnySource receives enumerated %d: want none", kinds(res.Findings), res.AnySource.Receives)
			}
		})
	}
}

// TestCancelledRecvNeverWaitedIsMissingWait: a cancel does not complete the
// request for the program: never waited, it is a missing Wait, live and
// under replay alike.
func TestCancelledRecvNeverWaitedIsMissingWait(t *testing.T) {
	fn := func(r *gpu.Rank) error {
		if r.ID() == 1 {
			return nil
		}
		q, err := r.Irecv(r.Alloc(gpu.Int32, 8), 1, 99)
		if err != nil {
			return err
		}
		return q.Cancel()
	}
	var re *gpu.RunError
	if err := gpu.Launch(2, fn); !errors.As(err, &re) || len(re.Findings) != 1 || re.Findings[0].Kind != verdict.MissingWait {
		t.Fatalf("live run: %v; want one missing wait", err)
	}
	c, ev := record(t, 2, fn)
	open := func() (replay.Source, error) { return ev.Source(), nil }
	res, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := wantFinding(t, res.Findings, verdict.MissingWait, "program", []int{0})
	if len(f.Ops) != 1 || f.Ops[0].Op != "Irecv" {
		t.Fatalf("ops %+v: want the cancelled Irecv", f.Ops)
	}
}

// delayTag delays the messages of one tag by d.
type delayTag struct {
	tag int
	d   time.Duration
}

func (delayTag) Sync() bool   { return false }
func (delayTag) Mutate() bool { return false }
func (f delayTag) Message(m faults.Message) faults.Action {
	if m.Tag == f.tag {
		return faults.Action{Delay: f.d}
	}
	return faults.Action{}
}

// TestReplayFollowsItsOwnCancel: recorded, the message matched the receive
// before its cancel (the cancel failed); replayed with that message delayed
// past the cancel, the cancel takes and the message is never received. The
// replay follows its simulation: an unmatched send, and no race of the
// cancelled receive with its recorded match.
func TestReplayFollowsItsOwnCancel(t *testing.T) {
	_, ev := record(t, 2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 8)
		if r.ID() == 1 {
			return r.Send(b, 0, 5)
		}
		if err := r.Compute(time.Millisecond); err != nil {
			return err
		}
		q, err := r.Irecv(b, gpu.AnySource, 5)
		if err != nil {
			return err
		}
		if err := q.Cancel(); err != nil {
			return err
		}
		_, err = r.Wait(q)
		return err
	})
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10})
	if err != nil || len(out.Problems) != 0 || len(out.Races) != 0 {
		t.Fatalf("as recorded: %v, problems %+v, races %+v; want clean", err, out.Problems, out.Races)
	}
	out, err = replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10, Faults: delayTag{5, 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Problems) != 1 || out.Problems[0].Kind != verdict.UnmatchedSend || len(out.Races) != 0 {
		t.Fatalf("delayed: problems %+v, races %+v; want one unmatched send and no race", out.Problems, out.Races)
	}
}
