// Command wrong-tag: rank 0 sends with tag 0; rank 1 receives with tag 1.
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
		buf := r.Alloc(gpu.Float32, *n)
		if r.ID() == 0 {
			return r.Send(buf, 1, 0) // culprit: send
		}
		_, err := r.Recv(buf, 0, 1) // culprit: recv
		return err
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train wrong-tag: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("wrong-tag: ok")
}
