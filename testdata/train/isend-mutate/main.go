// Command isend-mutate: rank 0 starts an Isend of a large buffer and writes
// into the buffer before Wait. Rank 1 has already posted its Recv and checks
// that it got the values rank 0 meant to send (the ones at Isend).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	n := flag.Int("n", 1<<20, "floats per message")
	flag.Parse()
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Float32, *n)
		if r.ID() == 0 {
			if err := r.Compute(time.Millisecond); err != nil { // rank 1's Recv is posted first
				return err
			}
			for i := range buf.Float32s() {
				buf.Float32s()[i] = float32(i)
			}
			q, err := r.Isend(buf, 1, 0) // culprit: isend
			if err != nil {
				return err
			}
			buf.Float32s()[0] = -1 // culprit: write
			_, err = r.Wait(q)     // culprit: wait
			return err
		}
		if _, err := r.Recv(buf, 0, 0); err != nil { // culprit: recv
			return err
		}
		for i, v := range buf.Float32s() {
			if v != float32(i) {
				return fmt.Errorf("rank 1: corrupted data: element %d = %v, want %v", i, v, float32(i))
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train isend-mutate: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("isend-mutate: ok")
}
