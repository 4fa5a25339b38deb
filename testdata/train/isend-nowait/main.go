// Command isend-nowait: requests never completed. -mode leak: rank 0's Isend
// and rank 1's Irecv are never waited. -mode free: rank 1 frees its large
// Irecv's request while the receive is still active; rank 0 sends. (Freeing
// an active send is legitimate, MPI-3.1 sec. 3.7.3; an active receive leaves
// the program no way to know when its buffer holds the message.)
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	mode := flag.String("mode", "leak", "leak or free")
	flag.Parse()
	if *mode != "leak" && *mode != "free" {
		fmt.Fprintf(os.Stderr, "p2ptrace train isend-nowait: -mode %q: want leak or free\n", *mode)
		os.Exit(2)
	}
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		if *mode == "leak" {
			buf := r.Alloc(gpu.Float32, 1024)
			if r.ID() == 0 {
				_, err := r.Isend(buf, 1, 0) // culprit: leak-isend
				return err
			}
			_, err := r.Irecv(buf, 0, 0) // culprit: leak-irecv
			return err
		}
		buf := r.Alloc(gpu.Float32, 1<<20)
		if r.ID() == 1 {
			q, err := r.Irecv(buf, 0, 0) // culprit: free-irecv
			if err != nil {
				return err
			}
			return q.Free() // culprit: free
		}
		return r.Send(buf, 1, 0) // culprit: free-send
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train isend-nowait: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("isend-nowait: ok")
}
