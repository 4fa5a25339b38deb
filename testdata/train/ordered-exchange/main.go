// Command ordered-exchange: the seed fix of head-to-head: rank 0 sends then
// receives, rank 1 receives then sends. Safe at any size and under sync.
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
		sbuf := r.Alloc(gpu.Float32, *n)
		rbuf := r.Alloc(gpu.Float32, *n)
		for i := range sbuf.Float32s() {
			sbuf.Float32s()[i] = float32(r.ID()*10 + i%7)
		}
		peer := 1 - r.ID()
		if r.ID() == 0 {
			if err := r.Send(sbuf, peer, 0); err != nil { // culprit: send-0
				return err
			}
			if _, err := r.Recv(rbuf, peer, 0); err != nil { // culprit: recv-0
				return err
			}
		} else {
			if _, err := r.Recv(rbuf, peer, 0); err != nil { // culprit: recv-1
				return err
			}
			if err := r.Send(sbuf, peer, 0); err != nil { // culprit: send-1
				return err
			}
		}
		for i, v := range rbuf.Float32s() {
			if want := float32(peer*10 + i%7); v != want {
				return fmt.Errorf("rank %d: element %d = %v, want %v", r.ID(), i, v, want)
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train ordered-exchange: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("ordered-exchange: ok")
}
