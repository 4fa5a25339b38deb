//go:build !linux

package hugepage

import "errors"

// Kernel reports whether the kernel has transparent huge pages (Linux's).
func Kernel() bool { return false }

// Advised reports whether the mapping that holds address a is advised to
// use huge pages: never, here.
func Advised(uintptr) (bool, error) { return false, errors.ErrUnsupported }
