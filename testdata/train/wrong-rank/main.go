// Command wrong-rank: three ranks; rank 0 means to send to rank 1 but sends
// to rank 2, which never receives. Rank 1 waits for a message that never comes.
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
	err := gpu.Launch(3, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Float32, *n)
		switch r.ID() {
		case 0:
			for i := range buf.Float32s() {
				buf.Float32s()[i] = float32(i)
			}
			return r.Send(buf, 2, 0) // culprit: send
		case 1:
			_, err := r.Recv(buf, 0, 0) // culprit: recv
			return err
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train wrong-rank: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("wrong-rank: ok")
}
