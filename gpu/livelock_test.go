package gpu_test

import (
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
)

// pollLivelock: rank 0 polls (Test, Compute between polls) a receive from
// rank 1 tag 3; rank 1 sends tag 2 and finishes.
func pollLivelock(r *gpu.Rank) error {
	b := r.Alloc(gpu.Float32, 4)
	if r.ID() == 1 {
		return r.Send(b, 0, 2)
	}
	q, err := r.Irecv(b, 1, 3)
	if err != nil {
		return err
	}
	for {
		ok, _, err := r.Test(q) // culprit: ll-poll
		if err != nil || ok {
			return err
		}
		if err := r.Compute(time.Microsecond); err != nil {
			return err
		}
	}
}

func TestPollingLivelockIsHang(t *testing.T) {
	start := time.Now()
	err := gpu.Launch(2, pollLivelock)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Launch took %v", d)
	}
	re := runError(t, err, gpu.ErrStuck)
	if len(re.Problems) != 1 {
		t.Fatalf("%d problems, want 1:\n%v", len(re.Problems), err)
	}
	p := re.Problems[0]
	wantProblem(t, p, verdict.Hang, []int{0}, "rank 0 Test at "+here2(t, "ll-poll"))
	if len(p.Blocked) != 1 || !p.Blocked[0].Polls || len(p.Blocked[0].Pending) != 1 || p.Blocked[0].Pending[0].Kind.String() != "Irecv" {
		t.Errorf("blocked %+v, want rank 0 polling its Irecv", p.Blocked)
	}
	for _, want := range []string{
		"hang (cause: program)\n    no rank can progress; rank 0 polls (Test) Irecv from rank 1 tag 3 (16 bytes); rank 1 has finished",
		"rank 0 polls without success in Test at livelock_test.go:",
		"waiting for Irecv from rank 1 tag 3 (16 bytes) at livelock_test.go:",
		"nearest candidate: rank 1 sent tag 2 to rank 0; rank 0 waits for Irecv from rank 1 tag 3 (16 bytes)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	if !errors.Is(re.RankErrors[0], gpu.ErrStuck) || !strings.Contains(re.RankErrors[0].Error(), "rank 0 polls in Test") {
		t.Errorf("rank 0's error %v, want ErrStuck naming its poll", re.RankErrors[0])
	}
}

func TestPollLimitOption(t *testing.T) {
	var polls int
	err := gpu.Launch(1, func(r *gpu.Rank) error {
		q, err := r.Irecv(r.Alloc(gpu.Float32, 1), 0, 0)
		if err != nil {
			return err
		}
		for {
			polls++
			if ok, _, err := r.Test(q); ok || err != nil {
				return err
			}
		}
	}, gpu.PollLimit(10))
	wantKinds(t, err, verdict.Hang)
	if polls != 10 {
		t.Errorf("%d polls, want 10 (the limit)", polls)
	}
}

// A slow sender: rank 1 talks with rank 2 (many small messages, compute
// between them) before each of its sends to rank 0, which polls meanwhile,
// far more often than the limit in all: the world keeps changing, so it is
// no hang, and every poll loop ends.
func TestSlowSenderPollsAreNotHang(t *testing.T) {
	const limit, msgs = 50, 3
	var polls int
	err := gpu.Launch(3, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		switch r.ID() {
		case 1:
			for i := range msgs {
				for range 2 * limit {
					if err := r.Compute(10 * time.Microsecond); err != nil {
						return err
					}
					if err := r.Send(b, 2, 0); err != nil {
						return err
					}
				}
				if err := r.Send(b, 0, i); err != nil {
					return err
				}
			}
			return nil
		case 2:
			for range msgs * 2 * limit {
				if _, err := r.Recv(b, 1, 0); err != nil {
					return err
				}
			}
			return nil
		}
		for i := range msgs {
			q, err := r.Irecv(b, 1, i)
			if err != nil {
				return err
			}
			for {
				polls++
				ok, err := r.Testall(q)
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
		}
		return nil
	}, gpu.PollLimit(limit))
	if err != nil {
		t.Fatal(err)
	}
	if polls <= 2*limit {
		t.Errorf("%d polls: the test must poll more than the limit (%d)", polls, limit)
	}
	t.Logf("%d polls", polls)
}

func here2(t *testing.T, marker string) string {
	t.Helper()
	return fmt.Sprintf("livelock_test.go:%d", markerLine(t, "livelock_test.go", marker))
}

// A rank that spins in its own code after a runtime call: RunTimeout ends
// the run with a no-progress Problem naming the rank and that call's line;
// once the spin ends, every goroutine returns (goleak checks).
func TestRunTimeoutNamesSpinningRank(t *testing.T) {
	var stop atomic.Bool
	defer stop.Store(true)
	start := time.Now()
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		if r.ID() == 1 {
			_, err := r.Recv(r.Alloc(gpu.Float32, 1), 0, 0)
			return err
		}
		if err := r.Compute(time.Millisecond); err != nil { // culprit: ll-spin-last
			return err
		}
		for !stop.Load() {
			// spins in user code: no runtime call
		}
		return r.Send(r.Alloc(gpu.Float32, 1), 1, 0)
	}, gpu.RunTimeout(300*time.Millisecond), gpu.WallTimeout(time.Minute))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Launch took %v, want about 300ms", d)
	}
	var re *gpu.RunError
	if !errors.As(err, &re) || !errors.Is(err, gpu.ErrWatchdog) || len(re.Problems) != 1 {
		t.Fatalf("%v, want a RunError wrapping ErrWatchdog with one problem", err)
	}
	wantProblem(t, re.Problems[0], verdict.NoProgress, []int{0}, "rank 0 Compute at "+here2(t, "ll-spin-last"))
	for _, want := range []string{
		"[1] no-progress (cause: program)\n    the run did not end within 300ms: rank 0 runs code of its own",
		"its last runtime call was Compute at livelock_test.go:",
		"Go cannot stop it",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	// The abandoned goroutines (rank 0 still spins) do not disturb a later run.
	if err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		if r.ID() == 0 {
			return r.Send(b, 1, 0)
		}
		_, err := r.Recv(b, 0, 0)
		return err
	}, gpu.RunTimeout(time.Minute)); err != nil {
		t.Fatalf("a run after the abandoned one: %v", err)
	}
}

// A rank that keeps calling the runtime forever (virtual time runs on, no
// poll): RunTimeout ends it, and the ranks unwind at once.
func TestRunTimeoutEndsEndlessComputeLoop(t *testing.T) {
	start := time.Now()
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		for {
			if err := r.Compute(time.Microsecond); err != nil { // culprit: ll-endless
				return err
			}
		}
	}, gpu.RunTimeout(200*time.Millisecond))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Launch took %v", d)
	}
	var re *gpu.RunError
	if !errors.As(err, &re) || len(re.Problems) != 1 || re.Problems[0].Kind != verdict.NoProgress {
		t.Fatalf("%v, want one no-progress problem", err)
	}
	if got := siteLine(re.Problems[0].Ops[0]); got != here2(t, "ll-endless") {
		t.Errorf("last call at %s, want %s", got, here2(t, "ll-endless"))
	}
}
