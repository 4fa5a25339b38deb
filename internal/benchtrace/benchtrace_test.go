package benchtrace_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/benchtrace"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

func TestRecordIsCachedAndReadable(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program")
	}
	p := benchtrace.Record(t, "ring", "", "-ranks", "4", "-iters", "3")
	if again := benchtrace.Record(t, "ring", "", "-ranks", "4", "-iters", "3"); again != p {
		t.Fatalf("second Record: %s, want the cached %s", again, p)
	}
	r, err := trace.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h := r.Header(); h.WorldSize != 4 || h.Status != trace.StatusComplete {
		t.Fatalf("header: %d ranks, status %s; want 4, complete", h.WorldSize, h.Status)
	}
}
