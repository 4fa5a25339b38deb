package prefetch

import "unsafe"

// Line asks the processor to start loading the cache line at p and returns
// at once (PREFETCHT0): unlike a load, it holds up nothing while the line
// is on its way, and it never faults.
//
//go:noescape
func Line(p unsafe.Pointer)
