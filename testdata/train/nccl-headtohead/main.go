// Command nccl-headtohead: NCCL style; both ranks enqueue a send then a recv
// on one stream, outside a group, then Synchronize. Each stream waits in its
// send for the peer's recv, which sits behind the peer's send: a hang at any size.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	n := flag.Int("n", 1024, "floats per message")
	flag.Parse()
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		sbuf := r.Alloc(gpu.Float32, *n)
		rbuf := r.Alloc(gpu.Float32, *n)
		peer := 1 - r.ID()
		s := r.Stream()
		if err := s.Send(sbuf, peer); err != nil { // culprit: send
			return err
		}
		if err := s.Recv(rbuf, peer); err != nil { // culprit: recv
			return err
		}
		return s.Synchronize() // culprit: sync
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train nccl-headtohead: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("nccl-headtohead: ok")
}
