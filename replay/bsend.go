package replay

import "github.com/p2ptrace/p2ptrace/recorder/trace"

// buffer makes the MPI_Buffer_attach or MPI_Buffer_detach of post event
// ev (its Count the attached bytes): the engine keeps the rank's attached
// space and checks its buffered sends against it (sim.Engine.BufferAttach).
// A detach blocks until the rank's buffered messages are transmitted in
// this replay, whatever they did when recorded.
func (d *driver) buffer(r int, c *rankCursor, ev *event) bool {
	call := d.msgOp(r, ev)
	if ev.op == trace.OpBufferDetach {
		d.hold(c, call)
		return d.e.BufferDetach(call)
	}
	d.e.BufferAttach(call) // not released: the engine names the attach in effect in its findings
	return true
}
