package sim

import (
	"testing"
	"unsafe"
)

// TestOpLayout pins the layout Op's doc promises: four whole cache lines;
// in the first, the envelope and all that the visits after the match
// (transfer done, completion, wait, release) read or write; in the second,
// the rest of what a match touches; in the third, the rest of what a
// replay's post writes; nothing of those in the last.
func TestOpLayout(t *testing.T) {
	var op Op
	if n := unsafe.Sizeof(op); n != 256 {
		t.Fatalf("an Op is %d bytes, want 256", n)
	}
	lines := []map[string]uintptr{{
		"Rank": unsafe.Offsetof(op.Rank), "Peer": unsafe.Offsetof(op.Peer), "Tag": unsafe.Offsetof(op.Tag),
		"Comm": unsafe.Offsetof(op.Comm), "match": unsafe.Offsetof(op.match), "DoneT": unsafe.Offsetof(op.DoneT),
		"Kind": unsafe.Offsetof(op.Kind), "Dtype": unsafe.Offsetof(op.Dtype), "Mode": unsafe.Offsetof(op.Mode),
		"bits": unsafe.Offsetof(op.bits), "done": unsafe.Offsetof(op.done), "eager": unsafe.Offsetof(op.eager),
		"awaited": unsafe.Offsetof(op.awaited), "delivered": unsafe.Offsetof(op.delivered),
		"waited": unsafe.Offsetof(op.waited), "released": unsafe.Offsetof(op.released), "kept": unsafe.Offsetof(op.kept),
		"wildTaken": unsafe.Offsetof(op.wildTaken), "Forced": unsafe.Offsetof(op.Forced), "Flag": unsafe.Offsetof(op.Flag),
	}, {
		"MatchT": unsafe.Offsetof(op.MatchT), "MatchRank": unsafe.Offsetof(op.MatchRank),
		"MatchSeq": unsafe.Offsetof(op.MatchSeq), "Source": unsafe.Offsetof(op.Source),
		"StatusTag": unsafe.Offsetof(op.StatusTag), "StatusCnt": unsafe.Offsetof(op.StatusCnt),
		"Bytes": unsafe.Offsetof(op.Bytes), "Seq": unsafe.Offsetof(op.Seq),
	}, {
		"PostT": unsafe.Offsetof(op.PostT), "Req": unsafe.Offsetof(op.Req), "Count": unsafe.Offsetof(op.Count),
		"Site": unsafe.Offsetof(op.Site), "Stream": unsafe.Offsetof(op.Stream), "Data": unsafe.Offsetof(op.Data),
	}, {
		"Delay": unsafe.Offsetof(op.Delay), "stream": unsafe.Offsetof(op.stream), "HashPost": unsafe.Offsetof(op.HashPost),
		"Reqs": unsafe.Offsetof(op.Reqs), "snap": unsafe.Offsetof(op.snap), "ForcedSrc": unsafe.Offsetof(op.ForcedSrc),
	}}
	for want, fields := range lines {
		for name, off := range fields {
			if line := int(off / 64); line != want {
				t.Errorf("%s at byte %d, in cache line %d, want %d", name, off, line, want)
			}
		}
	}
}
