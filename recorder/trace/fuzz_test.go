package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// seedTrace writes a small finished trace (sites, a payload, three ranks)
// and returns its bytes.
func seedTrace(f *testing.F) []byte {
	path := filepath.Join(f.TempDir(), "seed.p2ptrace")
	w, err := Create(path, Header{WorldSize: 3, Command: []string{"ring"}}, WriterOptions{NoSync: true, BlockSize: 512})
	if err != nil {
		f.Fatal(err)
	}
	w.AddSite(Site{ID: 1, Function: "main.f", File: "a.go", Line: 3})
	w.AddPayload(7, []byte("payload"))
	for r := int32(0); r < 3; r++ {
		evs := ringEvents(r, 3, 40)
		for i := range evs {
			w.Append(&evs[i])
		}
	}
	if err := w.Close(StatusComplete, ""); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzPrecheck feeds the raw-file checks that run before bbolt maps a file
// (meta pages, freelist, the page-tree walk) arbitrary bytes, in memory:
// errors, never a panic or a hang.
func FuzzPrecheck(f *testing.F) {
	b := seedTrace(f)
	f.Add(b)
	f.Add(b[:2*4096])
	f.Add([]byte("not a trace"))
	f.Fuzz(func(t *testing.T, data []byte) {
		precheckBytes("fuzz", bytes.NewReader(data), int64(len(data)))
	})
}

// FuzzDecodeSite: a site record decodes or is refused, and what decodes
// encodes to a record that decodes the same (not always to the same bytes:
// an overlong uvarint decodes too).
func FuzzDecodeSite(f *testing.F) {
	f.Add(encodeSite(Site{ID: 1, Function: "main.f", File: "a.go", Line: 3}))
	f.Add(encodeSite(Site{}))
	f.Fuzz(func(t *testing.T, v []byte) {
		s, err := decodeSite(1, v)
		if err != nil {
			return
		}
		if got, err := decodeSite(1, encodeSite(s)); err != nil || got != s {
			t.Fatalf("site %+v re-decodes to %+v, %v", s, got, err)
		}
	})
}

// FuzzCursorNextPost: however reads with NextPost (any maxSkip) and Next
// are mixed on one cursor, they give the events Next alone gives, and
// NextPost counts and names the Done events it skips. The input scripts a
// rank's record (posts, runs of Done events, wide Waitalls, across windows
// and blocks) and the reads.
func FuzzCursorNextPost(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(bytes.Repeat([]byte{0x83, 0x02, 0x41}, 300))
	f.Add(append(bytes.Repeat([]byte{0x10}, 200), bytes.Repeat([]byte{0xc1}, 400)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 || len(data) > 4096 {
			return
		}
		blockSize := []int{0, 256, 512, 2048}[data[0]&3]
		readScript := data[1]
		data = data[2:]
		var evs []Event
		var seq, req, vt uint64
		var open []uint64 // seqs of posts without their Done
		for i, b := range data {
			switch {
			case b&0xc0 == 0xc0 && len(open) > 0: // Done events, a run of up to 64
				for range min(int(b&0x3f)+1, len(open)) {
					k := open[0]
					open = open[1:]
					vt += uint64(b) + uint64(i%5)
					evs = append(evs, Event{Kind: KindDone, Seq: k, Op: OpIrecv, MatchRank: NoRank, DoneVT: int64(vt), StatusTag: int32(b & 7)})
				}
			case b&0xc0 == 0x80: // a Waitall of some open requests
				n := min(int(b&0x3f)*8, len(open))
				reqs := make([]uint64, n)
				for j := range reqs {
					reqs[j] = open[j] + 1
				}
				evs = append(evs, Event{Kind: KindPost, Seq: seq, Op: OpWaitall, Reqs: reqs, PostVT: int64(vt), MatchRank: NoRank})
				evs = append(evs, Event{Kind: KindDone, Seq: seq, Op: OpWaitall, MatchRank: NoRank, DoneVT: int64(vt)})
				seq++
			default: // a post
				req = seq + 1
				evs = append(evs, Event{Kind: KindPost, Seq: seq, Op: []Op{OpIsend, OpIrecv}[b&1], Peer: int32(b >> 1 & 3), Tag: int32(b >> 3), Dtype: Uint8, Count: int64(b), Bytes: int64(b), Req: req, PostVT: int64(vt), MatchRank: NoRank})
				open = append(open, seq)
				seq++
			}
		}
		if len(evs) == 0 {
			return
		}
		path := filepath.Join(t.TempDir(), "t.p2ptrace")
		w, err := Create(path, Header{WorldSize: 1}, WriterOptions{NoSync: true, BlockSize: blockSize})
		if err != nil {
			t.Fatal(err)
		}
		for i := range evs {
			w.Append(&evs[i])
		}
		if err := w.Close(StatusComplete, ""); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var want []Event
		c := r.Rank(0)
		for {
			var ev Event
			if !c.Next(&ev) {
				break
			}
			want = append(want, ev)
		}
		if c.Err() != nil || len(want) != len(evs) {
			t.Fatalf("Next: %d of %d events, %v", len(want), len(evs), c.Err())
		}
		c = r.Rank(0)
		n := 0
		for call := 0; ; call++ {
			var got *Event
			var ev Event
			if bit := readScript >> (call % 8) & 1; bit == 1 && call%3 == 0 {
				if c.Next(&ev) {
					got = &ev
				}
			} else {
				maxSkip := []int{0, 1, 7, 255, 1 << 20}[(call+int(readScript))%5]
				var skipped int
				var lastSeq uint64
				var lastOp Op
				got, skipped, lastSeq, lastOp = c.NextPost(maxSkip)
				k := 0
				for n < len(want) && want[n].Kind == KindDone && k < maxSkip {
					n, k = n+1, k+1
				}
				if skipped != k || k > 0 && (lastSeq != want[n-1].Seq || lastOp != want[n-1].Op) {
					t.Fatalf("read %d (maxSkip %d): skipped %d, last %d %v; want %d", call, maxSkip, skipped, lastSeq, lastOp, k)
				}
			}
			if got == nil {
				break
			}
			if n >= len(want) {
				t.Fatalf("read %d: more events than written", call)
			}
			g := *got
			g.Reqs = append([]uint64(nil), got.Reqs...)
			wn := want[n]
			if len(wn.Reqs) == 0 {
				wn.Reqs = nil
			}
			if len(g.Reqs) == 0 {
				g.Reqs = nil
			}
			if !reflect.DeepEqual(g, wn) {
				t.Fatalf("read %d: event %d\n got %+v\nwant %+v", call, n, g, wn)
			}
			n++
		}
		if err := c.Err(); err != nil || n != len(want) {
			t.Fatalf("NextPost: %d of %d events, %v", n, len(want), err)
		}
	})
}
