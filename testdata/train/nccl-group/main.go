// Command nccl-group: the NCCL head-to-head exchange inside
// GroupStart/GroupEnd, so the send and the recv progress together.
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
		s := r.Stream()
		if err := r.GroupStart(); err != nil {
			return err
		}
		if err := s.Send(sbuf, peer); err != nil { // culprit: send
			return err
		}
		if err := s.Recv(rbuf, peer); err != nil { // culprit: recv
			return err
		}
		if err := r.GroupEnd(); err != nil {
			return err
		}
		if err := s.Synchronize(); err != nil { // culprit: sync
			return err
		}
		for i, v := range rbuf.Float32s() {
			if want := float32(peer*10 + i%7); v != want {
				return fmt.Errorf("rank %d: element %d = %v, want %v", r.ID(), i, v, want)
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train nccl-group: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("nccl-group: ok")
}
