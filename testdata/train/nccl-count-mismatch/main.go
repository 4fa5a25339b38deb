// Command nccl-count-mismatch: NCCL style; rank 0's stream sends 1M floats,
// rank 1's stream receives 512K: the counts must agree.
package main

import (
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		s := r.Stream()
		if r.ID() == 0 {
			buf := r.Alloc(gpu.Float32, 1<<20)
			if err := s.Send(buf, 1); err != nil { // culprit: send
				return err
			}
		} else {
			buf := r.Alloc(gpu.Float32, 512<<10)
			if err := s.Recv(buf, 0); err != nil { // culprit: recv
				return err
			}
		}
		return s.Synchronize() // culprit: sync
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train nccl-count-mismatch: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("nccl-count-mismatch: ok")
}
