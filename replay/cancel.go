package replay

import "fmt"

// cancel makes the MPI_Cancel of post event ev, whose Reqs are in store:
// the engine cancels the op of the request it names (Reqs[0]) if the op is
// still unmatched in this replay (sim.Engine.Cancel). The request stays
// the program's to complete: a later Wait, Test or Free names it.
//
// The replay follows its own simulation, not the recording: a cancel that
// failed when recorded (the op had matched) may succeed under a fault that
// delays the message past it, and one that took may fail when the message
// comes sooner. That is what replaying under faults is for: the program
// depends on that timing, and the findings that follow from it (a message
// nobody receives, a rank waiting for data that was withdrawn) are the
// replay's. A receive cancelled under replay matched nothing, so it is not
// compared with its recorded match as a race (compareMatch).
func (d *driver) cancel(r int, c *rankCursor, ev *event, store []uint64) (bool, error) {
	ops, err := d.reqOps(r, c, ev, ev.reqsIn(store))
	if err != nil {
		return false, err
	}
	if len(ops) != 1 {
		return false, fmt.Errorf("%w: rank %d seq %d: Cancel needs one request", errBadTrace, r, ev.seq)
	}
	call := d.msgOp(r, ev)
	d.e.Cancel(call, ops[0])
	d.hold(c, call)
	return true, nil
}
