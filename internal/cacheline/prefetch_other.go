//go:build !amd64

package cacheline

import "unsafe"

// Prefetch does nothing here: only amd64 has the instruction wired up (see
// prefetch_amd64.s). The look-aheads it serves change no result.
func Prefetch(unsafe.Pointer) {}
