package hugepage

import (
	"testing"
	"unsafe"
)

func TestInner(t *testing.T) {
	const M = Size
	for _, c := range []struct {
		p, n, start, length uintptr
	}{
		{p: 0, n: 2 * M, start: 0, length: 2 * M},
		{p: 1, n: M, start: M, length: 0},         // no whole page: [M, M)
		{p: 1, n: 2 * M, start: M, length: M},     // the one page inside
		{p: 1, n: 3 * M, start: M, length: 2 * M}, // two
		{p: M - 8, n: 3*M + 16, start: M, length: 3 * M},
		{p: 5 * M, n: M - 1, start: 5 * M, length: 0}, // shorter than a page
	} {
		start, length := inner(c.p, c.n)
		if length != c.length || (length != 0 && start != c.start) {
			t.Errorf("inner(%#x, %#x) = %#x, %#x; want %#x, %#x", c.p, c.n, start, length, c.start, c.length)
		}
	}
}

// TestMakeIsMake: whatever the kernel does with the advice, Make's slice is
// make's: its length, zeroed, and usable.
func TestMakeIsMake(t *testing.T) {
	for _, n := range []int{0, 1, MinBytes/8 - 1, 3 * MinBytes / 8} {
		s := Make[uint64](n)
		if len(s) != n || cap(s) != n {
			t.Fatalf("Make(%d): len %d cap %d", n, len(s), cap(s))
		}
		for i := range s {
			if s[i] != 0 {
				t.Fatalf("Make(%d)[%d] = %d, want 0", n, i, s[i])
			}
			s[i] = uint64(i)
		}
		for i := range s {
			if s[i] != uint64(i) {
				t.Fatalf("Make(%d)[%d] lost its value", n, i)
			}
		}
	}
}

func addr[T any](s []T) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(s))) }
