// Command pingpong: rank 0 sends a large message to rank 1 and receives it
// back; rank 1 receives then sends. Correct under every ordering.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	n := flag.Int("n", 1<<20, "floats per message")
	flag.Parse()
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Float32, *n)
		if r.ID() == 0 {
			for i := range buf.Float32s() {
				buf.Float32s()[i] = float32(i)
			}
			if err := r.Send(buf, 1, 0); err != nil { // culprit: send
				return err
			}
			if _, err := r.Recv(buf, 1, 0); err != nil { // culprit: recv
				return err
			}
			for i, v := range buf.Float32s() {
				if v != float32(i)+1 {
					return fmt.Errorf("pong element %d = %v, want %v", i, v, float32(i)+1)
				}
			}
			return nil
		}
		if _, err := r.Recv(buf, 0, 0); err != nil { // culprit: ping-recv
			return err
		}
		for i := range buf.Float32s() {
			buf.Float32s()[i]++
		}
		return r.Send(buf, 0, 0) // culprit: pong-send
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train pingpong: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("pingpong: ok")
}
