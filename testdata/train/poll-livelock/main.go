// Command poll-livelock: rank 0 polls (Test, with Compute between polls) a
// receive from rank 1 tag 3; rank 1 sends tag 2 and finishes, so the poll
// never succeeds: a livelock, reported as a hang naming the Test's line.
// With -fixed, rank 1 sends tag 3 after a long computation: rank 0 polls
// many times, then its Test succeeds.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	fixed := flag.Bool("fixed", false, "send the tag rank 0 waits for (after a slow computation)")
	flag.Parse()
	tag := 2
	if *fixed {
		tag = 3
	}
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Float32, 16)
		if r.ID() == 1 {
			if err := r.Compute(50 * time.Millisecond); err != nil {
				return err
			}
			return r.Send(buf, 0, tag) // culprit: send
		}
		q, err := r.Irecv(buf, 1, 3) // culprit: irecv
		if err != nil {
			return err
		}
		for {
			ok, _, err := r.Test(q) // culprit: test
			if err != nil || ok {
				return err
			}
			if err := r.Compute(10 * time.Microsecond); err != nil {
				return err
			}
		}
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train poll-livelock: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("poll-livelock: ok")
}
