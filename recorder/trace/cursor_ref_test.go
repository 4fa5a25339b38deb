package trace_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestCursorNextRef: NextRef gives the events Next gives, however the two
// are mixed on one cursor, across windows and blocks (events longer than a
// window included).
func TestCursorNextRef(t *testing.T) {
	evs := ring(3, 60)
	for i := range evs {
		ev := &evs[i]
		if ev.Kind == trace.KindPost && ev.Op == trace.OpWaitall && ev.Seq%5 == 2 {
			for j := range 700 { // a post longer than a window
				ev.Reqs = append(ev.Reqs, uint64(j*7%900+1))
			}
		}
	}
	want := byRank(evs)
	for _, size := range []int{0, 2048} {
		path := filepath.Join(t.TempDir(), "t.p2ptrace")
		opts := fastOpts
		opts.BlockSize = size
		writeTrace(t, path, trace.Header{WorldSize: 3}, opts, evs)
		r, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for mix := range 3 { // all Next, all NextRef, mixed
			for rank := range r.Ranks() {
				c := r.Rank(rank)
				var ev trace.Event
				n := 0
				for ; ; n++ {
					mode := mix
					if mix == 2 {
						mode = n % 2
					}
					var got *trace.Event
					switch mode {
					case 0:
						if c.Next(&ev) {
							got = &ev
						}
					case 1:
						got = c.NextRef()
					}
					if got == nil {
						break
					}
					if n >= len(want[int32(rank)]) {
						t.Fatalf("size %d mix %d rank %d: more events than written", size, mix, rank)
					}
					w := &want[int32(rank)][n]
					g := *got
					g.Reqs = slices.Clone(got.Reqs)
					sameEvents(t, map[int32][]trace.Event{0: {*w}}, map[int32][]trace.Event{0: {g}})
				}
				if err := c.Err(); err != nil {
					t.Fatal(err)
				}
				if n != len(want[int32(rank)]) {
					t.Fatalf("size %d mix %d rank %d: %d events, want %d", size, mix, rank, n, len(want[int32(rank)]))
				}
			}
		}
	}
}

// TestCursorNextPost: NextPost skips the Done events before the next post,
// at most maxSkip of them, returns the event after them in full and counts
// those it skipped, the last one's Seq and Op included; mixed with Next on
// one cursor, across windows and blocks, and at the rank's end.
func TestCursorNextPost(t *testing.T) {
	evs := ring(3, 60)
	for i := range evs {
		ev := &evs[i]
		if ev.Kind == trace.KindPost && ev.Op == trace.OpWaitall && ev.Seq%5 == 2 {
			for j := range 700 { // a post longer than a window
				ev.Reqs = append(ev.Reqs, uint64(j*7%900+1))
			}
		}
	}
	want := byRank(evs)
	for _, size := range []int{0, 2048} {
		path := filepath.Join(t.TempDir(), "t.p2ptrace")
		opts := fastOpts
		opts.BlockSize = size
		writeTrace(t, path, trace.Header{WorldSize: 3}, opts, evs)
		r, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for _, maxSkip := range []int{0, 1, 2, 1 << 20} {
			for rank := range r.Ranks() {
				w := want[int32(rank)]
				c := r.Rank(rank)
				n := 0
				for call := 0; ; call++ {
					var got *trace.Event
					var ev trace.Event
					if call%4 == 3 { // Next in between
						if c.Next(&ev) {
							got = &ev
						}
					} else {
						var skipped int
						var seq uint64
						var op trace.Op
						got, skipped, seq, op = c.NextPost(maxSkip)
						k := 0
						for n < len(w) && w[n].Kind == trace.KindDone && k < maxSkip {
							n, k = n+1, k+1
						}
						if skipped != k || k > 0 && (seq != w[n-1].Seq || op != w[n-1].Op) {
							t.Fatalf("size %d maxSkip %d rank %d event %d: skipped %d (last %d %v), want %d",
								size, maxSkip, rank, n, skipped, seq, op, k)
						}
					}
					if got == nil {
						break
					}
					if n >= len(w) {
						t.Fatalf("size %d maxSkip %d rank %d: more events than written", size, maxSkip, rank)
					}
					g := *got
					g.Reqs = slices.Clone(got.Reqs)
					sameEvents(t, map[int32][]trace.Event{0: {w[n]}}, map[int32][]trace.Event{0: {g}})
					n++
				}
				if err := c.Err(); err != nil {
					t.Fatal(err)
				}
				if n != len(w) {
					t.Fatalf("size %d maxSkip %d rank %d: %d events, want %d", size, maxSkip, rank, n, len(w))
				}
			}
		}
	}
}
