// Command sendrecv-exchange: both ranks exchange a large message with
// Sendrecv, which posts both halves at once and so cannot deadlock.
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
		st, err := r.Sendrecv(sbuf, peer, 0, rbuf, peer, 0) // culprit: sendrecv
		if err != nil {
			return err
		}
		if st.Source != peer || st.Count != *n {
			return fmt.Errorf("rank %d: status %+v, want source %d count %d", r.ID(), st, peer, *n)
		}
		for i, v := range rbuf.Float32s() {
			if want := float32(peer*10 + i%7); v != want {
				return fmt.Errorf("rank %d: element %d = %v, want %v", r.ID(), i, v, want)
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train sendrecv-exchange: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("sendrecv-exchange: ok")
}
