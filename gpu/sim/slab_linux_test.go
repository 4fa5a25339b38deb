package sim

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// residentPages returns how many of the whole pages of s's memory are
// backed now (mincore), and how many there are.
func residentPages(t *testing.T, s []Op) (in, all int) {
	t.Helper()
	const page = 4096
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	start := (p + page - 1) &^ (page - 1)
	end := (p + uintptr(len(s))*unsafe.Sizeof(s[0])) &^ (page - 1)
	vec := make([]byte, (end-start)/page)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, start, end-start, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	for _, b := range vec {
		in += int(b & 1)
	}
	return in, len(vec)
}

func TestBigSlabsAreMadeAhead(t *testing.T) {
	e := New(Config{Ranks: 1})
	for range bigSlabAfter + maxSlab { // past the first big slab
		e.newOp(0, trace.OpIsend)
	}
	if e.nextSlab == nil {
		t.Fatal("after the first big slab, no slab is being made ahead")
	}
	next := <-e.nextSlab // waits for the maker
	if len(next) != bigSlab {
		t.Fatalf("the slab made ahead has %d ops, want %d", len(next), bigSlab)
	}
	if in, all := residentPages(t, next); in != all {
		t.Errorf("the slab made ahead has %d of its %d pages backed, want all: the maker touches each", in, all)
	}
	e.nextSlab <- next
	for len(e.slab) > 0 {
		e.newOp(0, trace.OpIsend)
	}
	if op := e.newOp(0, trace.OpIsend); op != &next[0] {
		t.Errorf("the op after the big slab ran out is not the first of the slab made ahead")
	}
}
