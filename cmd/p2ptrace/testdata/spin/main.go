// Command spin stops calling the runtime: rank 0 makes one call, then spins
// in its own code forever (-where launch), or the whole run ends cleanly and
// the program then spins outside gpu.Launch (-where after). A test program of
// `p2ptrace record --timeout`.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
)

var sink int

func spin() {
	for i := 0; ; i++ {
		sink = i
	}
}

func main() {
	where := flag.String("where", "launch", "launch or after")
	flag.Parse()
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		if err := r.Compute(time.Millisecond); err != nil { // culprit: last
			return err
		}
		if r.ID() == 0 && *where == "launch" {
			spin()
		}
		return r.Barrier()
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "spin: %v\n", err)
		os.Exit(1)
	}
	spin()
}
