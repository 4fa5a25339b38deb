package gpu_test

import (
	"errors"
	"fmt"

	"github.com/p2ptrace/p2ptrace/gpu"
)

// Both ranks Send 4 MiB before they Recv: above the eager limit each Send
// waits for its receive, so the run deadlocks. Launch finds it at once and
// says where each rank is stuck.
func ExampleLaunch() {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Float32, 1<<20)
		peer := 1 - r.ID()
		if err := r.Send(buf, peer, 0); err != nil {
			return err
		}
		_, err := r.Recv(buf, peer, 0)
		return err
	})
	var re *gpu.RunError
	if errors.As(err, &re) {
		f := re.Findings[0]
		fmt.Println(errors.Is(err, gpu.ErrStuck), f.Kind, f.Ranks, f.Cycle)
		fmt.Println(f.Message)
	}
	// Output:
	// true deadlock [0 1] [0 1 0]
	// no rank can progress; wait-for cycle: rank 0 -> rank 1 -> rank 0
}
