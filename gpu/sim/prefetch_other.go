//go:build !amd64

package sim

import "unsafe"

// prefetch does nothing here: only amd64 has the instruction wired up (see
// prefetch_amd64.s). The look-ahead it serves changes no result.
func prefetch(unsafe.Pointer) {}
