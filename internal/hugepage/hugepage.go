package hugepage

import "unsafe"

// Size is the huge page size Advise aligns to.
const Size = 2 << 20

// MinBytes is the smallest slice Make advises: smaller ones would hold at
// most one whole huge page, and share the rest with other allocations.
const MinBytes = 2 * Size

// Make returns make([]T, n), with the whole huge pages inside its memory
// advised to be backed by huge pages when it is at least MinBytes.
//
// Call it for memory that is fresh (made here) and long-lived: the advice
// takes effect at the first touch of a page, which for a new Go allocation
// of this size is the caller's first write.
func Make[T any](n int) []T {
	s := make([]T, n)
	if n > 0 {
		advise(unsafe.Pointer(unsafe.SliceData(s)), uintptr(n)*unsafe.Sizeof(s[0]))
	}
	return s
}

// inner returns the whole huge pages of [p, p+n): their start and length
// (0 if there is none).
func inner(p, n uintptr) (start, length uintptr) {
	start = (p + Size - 1) &^ (Size - 1)
	end := (p + n) &^ (Size - 1)
	if end <= start {
		return start, 0
	}
	return start, end - start
}

// arenaBytes is the span of address space around a slice that
// AdviseArena advises: Go's heap arena on 64-bit Linux.
const arenaBytes = 64 << 20

// AdviseArena advises the mapped part of the arenaBytes-aligned stretch of
// address space that holds p: the other objects the heap placed there, or
// will place in its free pages, get huge pages too.
func AdviseArena(p unsafe.Pointer) {
	adviseRange(uintptr(p)&^(arenaBytes-1), arenaBytes)
}
