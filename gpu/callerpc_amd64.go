package gpu

// callerPC returns the return address into user code of the exported runtime
// method that called it, read from that method's frame record (amd64 keeps
// frame pointers): a few nanoseconds instead of a stack unwind. Every
// exported method that calls it is marked noinline so that frame is its own.
func callerPC() uintptr
