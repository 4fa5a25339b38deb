package harness_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/harness"
)

func exchange(r *gpu.Rank) error {
	s, d := r.Alloc(gpu.Float32, 1024), r.Alloc(gpu.Float32, 1024)
	_, err := r.Sendrecv(s, 1-r.ID(), 0, d, 1-r.ID(), 0)
	return err
}

// A test runs its exchange code under zero buffering and random delays,
// 50 seeds each. (Examples cannot make a *testing.T: this one shows the test.)
func ExampleRun() {
	_ = func(t *testing.T) {
		harness.Run(t, 2, exchange, harness.Faults("sync"), harness.Faults("delay"), harness.Seeds(50))
	}
}

// A test of a known-bad pattern passes only if the finding appears.
func ExampleExpect() {
	_ = func(t *testing.T) {
		headToHead := func(r *gpu.Rank) error {
			b := r.Alloc(gpu.Float32, 16)
			if err := r.Send(b, 1-r.ID(), 0); err != nil {
				return err
			}
			_, err := r.Recv(b, 1-r.ID(), 0)
			return err
		}
		harness.Run(t, 2, headToHead, harness.Faults("sync"), harness.Expect("deadlock"))
	}
}
