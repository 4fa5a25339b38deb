// Command send-no-recv: rank 0 sends to rank 1, which returns without
// receiving. Large (default): the rendezvous Send hangs. Small (-bytes 4096):
// the eager Send completes and the message is left unmatched at finalize.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	bytes := flag.Int("bytes", 4<<20, "message size in bytes (a multiple of 4)")
	flag.Parse()
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Float32, *bytes/4)
		if r.ID() == 0 {
			return r.Send(buf, 1, 0) // culprit: send
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train send-no-recv: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("send-no-recv: ok")
}
