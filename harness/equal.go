package harness

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/p2ptrace/p2ptrace/gpu"
)

// window is how many elements around the first difference Equal shows.
const window = 4

// Equal fails t unless got and want hold the same elements. It names the
// first differing element and diffs a short window around it (go-cmp is
// slow on big slices and its output unstable, so it only sees the window).
func Equal(t testing.TB, got, want *gpu.Buffer) bool {
	t.Helper()
	if got.Dtype() != want.Dtype() || got.Len() != want.Len() {
		t.Errorf("buffers differ in shape: got %d %s, want %d %s", got.Len(), got.Dtype(), want.Len(), want.Dtype())
		return false
	}
	switch got.Dtype() {
	case gpu.Float32:
		return equal(t, got.Float32s(), want.Float32s())
	case gpu.Float64:
		return equal(t, got.Float64s(), want.Float64s())
	case gpu.Int32:
		return equal(t, got.Int32s(), want.Int32s())
	case gpu.Int64:
		return equal(t, got.Int64s(), want.Int64s())
	default:
		return equal(t, got.Uint8s(), want.Uint8s())
	}
}

func equal[T comparable](t testing.TB, got, want []T) bool {
	t.Helper()
	i := FirstDiff(got, want)
	if i < 0 {
		return true
	}
	lo, hi := max(i-window, 0), min(i+window+1, len(got))
	diff := cmp.Diff(want[lo:hi], got[lo:hi])
	t.Errorf("buffers differ first at element %d: got %v, want %v (%d of %d elements differ)\nelements %d..%d (-want +got):\n%s",
		i, got[i], want[i], countDiff(got, want), len(got), lo, hi-1, strings.TrimRight(diff, "\n"))
	return false
}

// FirstDiff returns the index of the first element where a and b differ, or -1.
func FirstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func countDiff[T comparable](a, b []T) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}
