package gpu

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// BufferAttach attaches bytes of space for the rank's buffered sends
// (MPI_Buffer_attach). From the rank's first attach on, each Bsend needs
// its message's bytes of that space until the message is transmitted (the
// receive that took it has it): a Bsend that does not fit beside the
// messages still held, or one made after BufferDetach with no buffer
// attached, is a bsend-buffer finding (its message is sent all the same).
// A second attach before BufferDetach is an invalid call. A rank that never
// attaches keeps Bsend as documented: it always completes locally, with no
// limit (the runtime's buffered sends never needed an attach, so programs
// written for it stay clean). Unlike MPI, a message needs no overhead
// (MPI_BSEND_OVERHEAD) beyond its bytes. The rules: gpu/sim/bsend.go.
//
//go:noinline
func (r *Rank) BufferAttach(bytes int64) error {
	if err := r.enter(); err != nil {
		return err
	}
	call := r.w.eng.NewOp(r.id, trace.OpBufferAttach)
	call.Site, call.Count, call.Bytes = callerPC(), bytes, bytes
	r.last.Store(call)
	r.w.eng.BufferAttach(call)
	if call.Err != trace.ErrNone {
		return fmt.Errorf("rank %d: BufferAttach of %d bytes: a buffer is attached already", r.id, bytes)
	}
	return nil
}

// BufferDetach takes the rank's buffer back (MPI_Buffer_detach): it returns
// once every buffered message of the rank is transmitted, with the size
// attached (0 if none was). A message nobody receives keeps it blocked: a
// hang.
//
//go:noinline
func (r *Rank) BufferDetach() (int64, error) {
	if err := r.enter(); err != nil {
		return 0, err
	}
	call := r.w.eng.NewOp(r.id, trace.OpBufferDetach)
	call.Site = callerPC()
	r.last.Store(call)
	if !r.w.eng.BufferDetach(call) {
		if err := r.pause(call); err != nil {
			return 0, err
		}
	}
	return call.Bytes, nil
}
