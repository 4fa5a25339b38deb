package hugepage

import (
	"syscall"
	"unsafe"
)

func advise(p unsafe.Pointer, n uintptr) {
	if n < MinBytes {
		return
	}
	if start, length := inner(uintptr(p), n); length != 0 {
		adviseRange(start, length)
	}
}

// adviseRange takes addresses, not a pointer: an arena's bounds lie
// outside any one Go object (a pointer to them would fail checkptr), and
// the heap does not move.
func adviseRange(start, n uintptr) {
	// The advice is a hint: a kernel without transparent huge pages
	// (EINVAL), a setting of "never", or a range with unmapped holes
	// (ENOMEM: the mapped parts are advised) leave the rest as it was.
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, n, syscall.MADV_HUGEPAGE)
}
