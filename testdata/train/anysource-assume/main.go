// Command anysource-assume: ranks 1 and 2 each send their rank to rank 0,
// which receives from AnySource twice and assumes the first message is rank
// 1's. The calls are the same in either order; only the data tells: when
// rank 2 comes first the program fails. check judges the race by re-running
// the program with rank 2's message forced first. Correct version:
// anysource-race (checks who sent what).
package main

import (
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	err := gpu.Launch(3, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Int32, 1)
		if r.ID() == 0 {
			var got []int32
			for range 2 {
				if _, err := r.Recv(buf, gpu.AnySource, 0); err != nil { // culprit: recv-any
					return err
				}
				got = append(got, buf.Int32s()[0])
			}
			if got[0] != 1 {
				return fmt.Errorf("rank 0: the first message is rank %d's, want rank 1's", got[0])
			}
			return nil
		}
		buf.Int32s()[0] = int32(r.ID())
		return r.Send(buf, 0, 0) // culprit: send
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train anysource-assume: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("anysource-assume: ok")
}
