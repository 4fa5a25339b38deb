// Command ring: every iteration each rank Isends to the next rank and Irecvs
// from the previous one, then Waitall, and checks what it got.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	ranks := flag.Int("ranks", 8, "number of ranks")
	iters := flag.Int("iters", 10, "iterations")
	bytes := flag.Int("bytes", 1024, "message size in bytes (a multiple of 4)")
	flag.Parse()
	n := *bytes / 4
	err := gpu.Launch(*ranks, func(r *gpu.Rank) error {
		size := r.Size()
		next, prev := (r.ID()+1)%size, (r.ID()-1+size)%size
		sbuf := r.Alloc(gpu.Float32, n)
		rbuf := r.Alloc(gpu.Float32, n)
		for it := range *iters {
			for i := range sbuf.Float32s() {
				sbuf.Float32s()[i] = float32(r.ID()*1000 + it*10 + i%10)
			}
			sq, err := r.Isend(sbuf, next, it) // culprit: isend
			if err != nil {
				return err
			}
			rq, err := r.Irecv(rbuf, prev, it) // culprit: irecv
			if err != nil {
				return err
			}
			if err := r.Waitall(sq, rq); err != nil { // culprit: waitall
				return err
			}
			for i, v := range rbuf.Float32s() {
				if want := float32(prev*1000 + it*10 + i%10); v != want {
					return fmt.Errorf("rank %d iteration %d: element %d = %v, want %v", r.ID(), it, i, v, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train ring: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("ring: ok, %d ranks, %d iterations of %d bytes\n", *ranks, *iters, n*4)
}
