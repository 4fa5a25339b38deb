// Command irecv-read-early: rank 1 posts an Irecv and reads the buffer before
// Wait, trusting the data is there (rank 0 sent it a millisecond earlier).
// It checks what it read and fails if the data had not landed: in a plain run
// it has, so the bug hides; with delay (or mutate) the check catches it.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	n := flag.Int("n", 1024, "floats per message")
	flag.Parse()
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Float32, *n)
		if r.ID() == 0 {
			for i := range buf.Float32s() {
				buf.Float32s()[i] = float32(i + 1)
			}
			return r.Send(buf, 1, 0) // culprit: send
		}
		if err := r.Compute(time.Millisecond); err != nil {
			return err
		}
		q, err := r.Irecv(buf, 0, 0) // culprit: irecv
		if err != nil {
			return err
		}
		early := buf.Float32s()[*n-1] // culprit: read
		if want := float32(*n); early != want {
			return fmt.Errorf("rank 1: read before Wait: element %d = %v, want %v", *n-1, early, want)
		}
		_, err = r.Wait(q) // culprit: wait
		return err
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train irecv-read-early: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("irecv-read-early: ok")
}
