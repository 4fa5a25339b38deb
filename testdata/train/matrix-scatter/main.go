// Command matrix-scatter: rank 0 holds a 1024x1024 float matrix and sends
// 256-row blocks (1 MiB each) to ranks 1..3, which verify their block.
package main

import (
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

const (
	dim   = 1024
	ranks = 4
	rows  = dim / ranks
)

func value(row, col int) float32 { return float32(row*dim + col) }

func main() {
	err := gpu.Launch(ranks, func(r *gpu.Rank) error {
		if r.ID() == 0 {
			m := r.Alloc(gpu.Float32, dim*dim)
			f := m.Float32s()
			for i := range f {
				f[i] = value(i/dim, i%dim)
			}
			for k := 1; k < ranks; k++ {
				block := m.Slice(k*rows*dim, rows*dim)
				if err := r.Send(block, k, 0); err != nil { // culprit: send
					return err
				}
			}
			return nil
		}
		block := r.Alloc(gpu.Float32, rows*dim)
		st, err := r.Recv(block, 0, 0) // culprit: recv
		if err != nil {
			return err
		}
		if st.Count != rows*dim {
			return fmt.Errorf("rank %d: received %d floats, want %d", r.ID(), st.Count, rows*dim)
		}
		for i, v := range block.Float32s() {
			if want := value(r.ID()*rows+i/dim, i%dim); v != want {
				return fmt.Errorf("rank %d: element %d = %v, want %v", r.ID(), i, v, want)
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train matrix-scatter: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("matrix-scatter: ok, 3 blocks of 1 MiB")
}
