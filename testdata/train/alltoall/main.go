// Command alltoall: every iteration each rank Isends to every other rank
// and Irecvs from every other rank, then Waitall, and checks what it got.
// Each rank has size-1 messages in flight each way: the matching of a rank
// that holds many posted receives and unexpected sends at once.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

// value is element i of the message rank src sends to rank dst in
// iteration it: every message of a run differs from every other.
func value(src, dst, it, i int) int32 {
	return int32(src*7919 + dst*104729 + it*31 + i)
}

func main() {
	ranks := flag.Int("ranks", 8, "number of ranks")
	iters := flag.Int("iters", 10, "iterations")
	bytes := flag.Int("bytes", 64, "message size in bytes (a multiple of 4)")
	flag.Parse()
	n := *bytes / 4
	err := gpu.Launch(*ranks, func(r *gpu.Rank) error {
		size, me := r.Size(), r.ID()
		// One message per peer (the slot of rank p is p; its own is unused).
		sbuf := r.Alloc(gpu.Int32, n*size)
		rbuf := r.Alloc(gpu.Int32, n*size)
		reqs := make([]*gpu.Request, 0, 2*(size-1))
		for it := range *iters {
			reqs = reqs[:0]
			for k := 1; k < size; k++ {
				dst := (me + k) % size
				out := sbuf.Slice(dst*n, n)
				for i := range out.Int32s() {
					out.Int32s()[i] = value(me, dst, it, i)
				}
				q, err := r.Isend(out, dst, it) // culprit: isend
				if err != nil {
					return err
				}
				reqs = append(reqs, q)
			}
			for k := 1; k < size; k++ {
				src := (me - k + size) % size
				q, err := r.Irecv(rbuf.Slice(src*n, n), src, it) // culprit: irecv
				if err != nil {
					return err
				}
				reqs = append(reqs, q)
			}
			if err := r.Waitall(reqs...); err != nil { // culprit: waitall
				return err
			}
			for src := range size {
				if src == me {
					continue
				}
				for i, v := range rbuf.Slice(src*n, n).Int32s() {
					if want := value(src, me, it, i); v != want {
						return fmt.Errorf("rank %d iteration %d: element %d from rank %d = %d, want %d", me, it, i, src, v, want)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train alltoall: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("alltoall: ok, %d ranks, %d iterations of %d bytes per pair\n", *ranks, *iters, n*4)
}
