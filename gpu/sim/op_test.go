package sim

import (
	"testing"
	"unsafe"
)

// TestOpLayout pins the layout Op's doc promises: four whole cache lines,
// the envelope in the first, and what a message op's later visits (match,
// completion, release) do not read in the last.
func TestOpLayout(t *testing.T) {
	var op Op
	if n := unsafe.Sizeof(op); n != 256 {
		t.Fatalf("an Op is %d bytes, want 256", n)
	}
	for name, off := range map[string]uintptr{"Rank": unsafe.Offsetof(op.Rank), "Peer": unsafe.Offsetof(op.Peer),
		"Tag": unsafe.Offsetof(op.Tag), "Comm": unsafe.Offsetof(op.Comm), "match": unsafe.Offsetof(op.match),
		"Forced": unsafe.Offsetof(op.Forced)} {
		if off >= 64 {
			t.Errorf("%s at byte %d, not in the first cache line", name, off)
		}
	}
	for name, off := range map[string]uintptr{"Count": unsafe.Offsetof(op.Count), "Site": unsafe.Offsetof(op.Site),
		"Stream": unsafe.Offsetof(op.Stream), "HashPost": unsafe.Offsetof(op.HashPost), "Reqs": unsafe.Offsetof(op.Reqs)} {
		if off < 192 {
			t.Errorf("%s at byte %d, not in the last cache line", name, off)
		}
	}
}
