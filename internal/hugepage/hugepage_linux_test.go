package hugepage

import (
	"testing"
	"unsafe"
)

// advised is Advised, failing t on an error.
func advised(t *testing.T, a uintptr) bool {
	t.Helper()
	ok, err := Advised(a)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// thpKernel is Kernel, for short.
func thpKernel() bool { return Kernel() }

func TestAdviseArenaAdvisesTheNeighbours(t *testing.T) {
	// Two neighbours, too small for Make to advise: once one's arena is
	// advised, the mapped memory around it is too.
	// (This test runs first: no arena of this process is advised yet.)
	a := make([]byte, 64<<10)
	if advised(t, addr(a)) {
		t.Fatal("the memory is advised before AdviseArena")
	}
	AdviseArena(unsafe.Pointer(unsafe.SliceData(a)))
	if got, want := advised(t, addr(a)), thpKernel(); got != want {
		t.Errorf("memory in the advised arena: advised %v, want %v", got, want)
	}
}

func TestMakeAdvisesItsWholePages(t *testing.T) {
	s := Make[byte](3 * MinBytes)
	start, length := inner(addr(s), uintptr(len(s)))
	if length == 0 {
		t.Fatalf("a slice of %d bytes holds no whole huge page", len(s))
	}
	if got, want := advised(t, start), thpKernel(); got != want {
		t.Errorf("the slice's huge pages advised: %v, want %v (the kernel has transparent huge pages: %v)", got, want, want)
	}
	if got, want := advised(t, start+length-1), thpKernel(); got != want {
		t.Errorf("the slice's last huge page advised: %v, want %v", got, want)
	}
}
