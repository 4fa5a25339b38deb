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
// one cursor, across windows and blocks, and at the rank's end; runs of
// Done events longer than a window (a Waitall of many requests) included.
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
	t.Run("ring", func(t *testing.T) { testNextPost(t, evs, 3) })
	t.Run("wide waits", func(t *testing.T) { testNextPost(t, wideWaits(2, 1, 400), 2) })
}

// wideWaits is the record of ranks that each post n Irecvs and a Waitall
// of them, iters times: every Waitall is followed by a run of n Done
// events (completions in another order than the posts), many windows of
// a Cursor long.
func wideWaits(ranks int32, iters, n int) []trace.Event {
	var evs []trace.Event
	for r := range ranks {
		var seq, req uint64
		var vt, wall int64
		for range iters {
			first := seq
			reqs := make([]uint64, n)
			for j := range n {
				req++
				reqs[j] = req
				evs = append(evs, trace.Event{Kind: trace.KindPost, Rank: r, Seq: seq, Op: trace.OpIrecv, Peer: (r + 1) % ranks, Tag: int32(j), Dtype: trace.Uint8, Count: 8, Bytes: 8, Req: req, Site: 1, PostVT: vt, PostWall: wall, MatchRank: trace.NoRank})
				seq++
				wall += 90 + int64(j%7)
			}
			w := seq
			evs = append(evs, trace.Event{Kind: trace.KindPost, Rank: r, Seq: w, Op: trace.OpWaitall, Reqs: reqs, Site: 2, PostVT: vt, PostWall: wall, MatchRank: trace.NoRank})
			seq++
			for j := range n {
				k := j * 7 % n // (n is not a multiple of 7)
				vt += int64(100 + k%13)
				wall += int64(40 + k%5)
				evs = append(evs, trace.Event{Kind: trace.KindDone, Rank: r, Seq: first + uint64(k), Op: trace.OpIrecv, MatchRank: (r + 1) % ranks, MatchSeq: uint64(k), MatchVT: vt - 50, DoneVT: vt, DoneWall: wall, Source: (r + 1) % ranks, StatusTag: int32(k), StatusCnt: 8})
			}
			evs = append(evs, trace.Event{Kind: trace.KindDone, Rank: r, Seq: w, Op: trace.OpWaitall, MatchRank: trace.NoRank, DoneVT: vt, DoneWall: wall})
		}
	}
	return evs
}

func testNextPost(t *testing.T, evs []trace.Event, ranks int32) {
	want := byRank(evs)
	for _, size := range []int{0, 2048} {
		path := filepath.Join(t.TempDir(), "t.p2ptrace")
		opts := fastOpts
		opts.BlockSize = size
		writeTrace(t, path, trace.Header{WorldSize: int(ranks)}, opts, evs)
		r, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for _, maxSkip := range []int{0, 1, 2, 255, 1 << 20} {
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
