// Command anysource-race: ranks 1 and 2 each send to rank 0, which receives
// from AnySource twice and replies first to whichever sender came first,
// telling each its place. Correct whatever the order, but the order is a race.
package main

import (
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func main() {
	var first int
	err := gpu.Launch(3, func(r *gpu.Rank) error {
		buf := r.Alloc(gpu.Int32, 16)
		if r.ID() == 0 {
			var order []int
			for range 2 {
				st, err := r.Recv(buf, gpu.AnySource, 0) // culprit: recv-any
				if err != nil {
					return err
				}
				if int(buf.Int32s()[0]) != st.Source {
					return fmt.Errorf("rank 0: message from rank %d says %d", st.Source, buf.Int32s()[0])
				}
				order = append(order, st.Source)
			}
			first = order[0]
			for place, dst := range order {
				buf.Int32s()[0] = int32(place)
				if err := r.Send(buf, dst, 1); err != nil { // culprit: reply
					return err
				}
			}
			return nil
		}
		buf.Int32s()[0] = int32(r.ID())
		if err := r.Send(buf, 0, 0); err != nil { // culprit: send
			return err
		}
		_, err := r.Recv(buf, 0, 1) // culprit: recv-reply
		return err
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "p2ptrace train anysource-race: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("anysource-race: ok, rank %d came first\n", first)
}
