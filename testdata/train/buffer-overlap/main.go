// Command buffer-overlap: two ranks exchange 4 ints through buffers that
// share bytes, which the MPI standard forbids (the outcome depends on the
// order the transfers take). -mode pending: each rank posts an Irecv into
// elements 0..3 and, while it is pending, an Isend from elements 2..5;
// -mode sendrecv: one Sendrecv sends elements 0..3 and receives into 2..5;
// -mode fixed: the same exchange from disjoint slices (0..3 and 4..7).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	mode := flag.String("mode", "pending", "pending, sendrecv or fixed")
	flag.Parse()
	if *mode != "pending" && *mode != "sendrecv" && *mode != "fixed" {
		fmt.Fprintf(os.Stderr, "p2ptrace train buffer-overlap: -mode %q: want pending, sendrecv or fixed\n", *mode)
		os.Exit(2)
	}
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		peer := 1 - r.ID()
		buf := r.Alloc(gpu.Int32, 8)
		in, out := buf.Slice(0, 4), buf.Slice(2, 4)
		switch *mode {
		case "sendrecv":
			_, err := r.Sendrecv(in, peer, 0, out, peer, 0) // culprit: sendrecv
			return err
		case "fixed":
			out = buf.Slice(4, 4)
		}
		q1, err := r.Irecv(in, peer, 0) // culprit: irecv
		if err != nil {
			return err
		}
		q2, err := r.Isend(out, peer, 0) // culprit: isend
		if err != nil {
			return err
		}
		return r.Waitall(q1, q2)
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train buffer-overlap: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("buffer-overlap: ok")
}
