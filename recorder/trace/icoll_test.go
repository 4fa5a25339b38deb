package trace

import (
	"strings"
	"testing"
)

// TestOpBlocking: each nonblocking collective's blocking form is the op of
// the same name without its I, case aside (Ibcast: Bcast, Ireduce_scatter_block:
// Reduce_scatter_block), it is a collective, a reduction when its blocking
// form is, and fits the codec's 6-bit op context; other ops are their own
// blocking form.
func TestOpBlocking(t *testing.T) {
	for o := OpIbarrier; o <= OpIexscan; o++ {
		b := o.Blocking()
		if !strings.EqualFold("I"+b.String(), o.String()) {
			t.Errorf("%s: blocking form %s", o, b)
		}
		if !o.IsCollective() || !o.IsNonblockingCollective() || b.IsNonblockingCollective() || o.IsReduction() != b.IsReduction() {
			t.Errorf("%s: collective %v nonblocking %v, reduction %v (blocking form's %v)", o, o.IsCollective(), o.IsNonblockingCollective(), o.IsReduction(), b.IsReduction())
		}
		if !o.Valid() || o >= 64 {
			t.Errorf("%s = %d: not a valid op below 64", o, o)
		}
	}
	if OpIbarrier.String() != "Ibarrier" || OpIbarrier.Blocking() != OpBarrier {
		t.Errorf("Ibarrier: %s, blocking %s", OpIbarrier, OpIbarrier.Blocking())
	}
	for _, o := range []Op{OpIsend, OpBcast, OpBarrier, OpWait} {
		if o.Blocking() != o || o.IsNonblockingCollective() {
			t.Errorf("%s: blocking form %s", o, o.Blocking())
		}
	}
}
