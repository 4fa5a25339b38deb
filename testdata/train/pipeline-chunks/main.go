// Command pipeline-chunks: rank 0 sends 64 KiB chunks with Isend into
// requests[i%4] and calls Waitall every 4 chunks. With a total that is not a
// multiple of 4 (the default, 10), the last partial group is never waited.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

const chunk = 16384 // floats: 64 KiB

func main() {
	chunks := flag.Int("chunks", 10, "number of chunks")
	flag.Parse()
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Float32, *chunks*chunk)
		if r.ID() == 0 {
			f := buf.Float32s()
			for i := range f {
				f[i] = float32(i)
			}
			var reqs [4]*gpu.Request
			for i := range *chunks {
				q, err := r.Isend(buf.Slice(i*chunk, chunk), 1, i) // culprit: isend
				if err != nil {
					return err
				}
				reqs[i%4] = q
				if i%4 == 3 {
					if err := r.Waitall(reqs[:]...); err != nil { // culprit: waitall
						return err
					}
				}
			}
			return nil // bug: a partial last group is left unwaited
		}
		for i := range *chunks {
			if _, err := r.Recv(buf.Slice(i*chunk, chunk), 0, i); err != nil { // culprit: recv
				return err
			}
		}
		for i, v := range buf.Float32s() {
			if v != float32(i) {
				return fmt.Errorf("rank 1: element %d = %v, want %v", i, v, float32(i))
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train pipeline-chunks: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("pipeline-chunks: ok, %d chunks\n", *chunks)
}
