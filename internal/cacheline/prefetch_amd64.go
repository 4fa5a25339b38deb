package cacheline

import "unsafe"

// Prefetch asks the processor to start loading the cache line at p and returns
// at once (PREFETCHT0): unlike a load, it holds up nothing while the line
// is on its way, and it never faults.
//
//go:noescape
func Prefetch(p unsafe.Pointer)
