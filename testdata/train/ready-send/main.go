// Command ready-send: rank 0 sends with Rsend, ready mode, which MPI-3.1
// sec. 3.4 allows only once the matching receive is posted. Rank 1 posts
// its Irecv as it starts, and rank 0 computes for a microsecond first, so
// the receive is posted first in every run of the simulation; but nothing
// tells rank 0 that it is: only the timing orders the two. The live run is
// clean; record and check hold rank 1 back before its Irecv, and the Rsend
// then finds no receive posted (ready-without-recv). -mode fixed: rank 1
// posts, then both ranks meet in a barrier, then rank 0 sends: the barrier
// orders the post before the send, and the held replay is clean too.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	mode := flag.String("mode", "timing", "timing or fixed")
	flag.Parse()
	if *mode != "timing" && *mode != "fixed" {
		fmt.Fprintf(os.Stderr, "p2ptrace train ready-send: -mode %q: want timing or fixed\n", *mode)
		os.Exit(2)
	}
	fixed := *mode == "fixed"
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Float32, 16)
		if r.ID() == 1 {
			q, err := r.Irecv(buf, 0, 0) // culprit: irecv
			if err != nil {
				return err
			}
			if fixed {
				if err := r.Barrier(); err != nil {
					return err
				}
			}
			_, err = r.Wait(q)
			return err
		}
		if fixed {
			if err := r.Barrier(); err != nil {
				return err
			}
		} else if err := r.Compute(time.Microsecond); err != nil {
			return err
		}
		return r.Rsend(buf, 1, 0) // culprit: rsend
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train ready-send: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("ready-send: ok")
}
