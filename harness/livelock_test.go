package harness_test

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/harness"
	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
)

// pollLivelock: rank 0 polls a receive (tag 3) that rank 1, which sends
// tag 2 and finishes, never sends.
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
		ok, _, err := r.Test(q) // culprit: h-poll
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
	fs := harness.Run(t, 2, pollLivelock, harness.Seeds(4), harness.Faults("delay"), harness.Expect("hang"))
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("harness.Run took %v, want seconds", d)
	}
	line := fmtLine(t, "h-poll")
	for _, f := range fs {
		if !slices.Equal(f.Kinds, []string{"hang"}) || !strings.Contains(f.Err.Error(), "rank 0 polls without success in Test at ") || !strings.Contains(f.Err.Error(), line) {
			t.Errorf("seed %d: kinds %v:\n%v", f.Seed, f.Kinds, f.Err)
		}
	}
	live := 0
	for _, f := range fs {
		if f.Replay == "" {
			live++
		}
	}
	// Every live run hangs; the check battery adds the hang under sync
	// (rank 1 then also blocks in its Send).
	if live != 8 {
		t.Errorf("%d failing live runs, want all 8", live)
	}
}

// A rank spinning in its own code after a Compute: Timeout(1s) ends the run
// with no-progress naming the rank and the Compute's line, within about
// twice the timeout.
func TestTimeoutEndsRankSpinningInUserCode(t *testing.T) {
	var stop atomic.Bool
	defer stop.Store(true)
	start := time.Now()
	fs := harness.Run(t, 2, func(r *gpu.Rank) error {
		if r.ID() == 1 {
			return r.Barrier()
		}
		if err := r.Compute(time.Millisecond); err != nil { // culprit: h-spin
			return err
		}
		for !stop.Load() {
		}
		return r.Barrier()
	}, harness.Seeds(1), harness.Timeout(time.Second), harness.Expect("no-progress"))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("harness.Run took %v, want about 1s", d)
	}
	if len(fs) != 1 || !slices.Equal(fs[0].Kinds, []string{"no-progress"}) {
		t.Fatalf("%+v", fs)
	}
	for _, want := range []string{"[1] no-progress (cause: program)\n    the run did not end within 1s: rank 0 runs code of its own", "its last runtime call was Compute at ", fmtLine(t, "h-spin")} {
		if !strings.Contains(fs[0].Err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, fs[0].Err)
		}
	}
}

func fmtLine(t *testing.T, marker string) string {
	t.Helper()
	return "livelock_test.go:" + strconv.Itoa(scenariotest.MarkerLine(t, "livelock_test.go", marker))
}
