package mpi

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestMergeCancel: MPI_Cancel merges as a Cancel op over the request it
// named, with no envelope; the receive whose done has the flag (the shim's
// MPI_Test_cancelled at its Wait) is cancelled: its Done has Flag, no
// source and no match, though rank 1 sent a message of its envelope after
// it (which matches the next receive). A cancel of a request the shim did
// not see active (no request named) is no op; a cancel that did not take
// leaves a receive that matched.
func TestMergeCancel(t *testing.T) {
	dir := t.TempDir()
	anySrc := int32(trace.AnySource)
	r0 := []record{
		{Type: recPost, Call: callIrecv, Op: uint8(trace.OpIrecv), Seq: 0, Peer: anySrc, Tag: 7, Dtype: uint8(trace.Int32), Count: 4, Bytes: 16, Req: 1, T0: 100, T1: 110},
		{Type: recPost, Call: callCancel, Op: uint8(trace.OpCancel), Seq: 1, Reqs: []uint64{1}, T0: 200},
		{Type: recDone, Call: callCancel, Seq: 1, T1: 210, Source: -1, StatTag: -1},
		{Type: recPost, Call: callWait, Op: uint8(trace.OpWait), Seq: 2, Reqs: []uint64{1}, T0: 300},
		{Type: recDone, Call: callWait, Seq: 0, T1: 310, Req: 1, Flag: true, Source: -1, StatTag: -1},
		{Type: recDone, Call: callWait, Seq: 2, T1: 310, Source: -1, StatTag: -1},
		{Type: recPost, Call: callCancel, Op: uint8(trace.OpCancel), Seq: 3, T0: 400},
		{Type: recDone, Call: callCancel, Seq: 3, T1: 410, Source: -1, StatTag: -1},
		{Type: recPost, Call: callIrecv, Op: uint8(trace.OpIrecv), Seq: 4, Peer: anySrc, Tag: 7, Dtype: uint8(trace.Int32), Count: 4, Bytes: 16, Req: 2, T0: 500, T1: 510},
		{Type: recPost, Call: callCancel, Op: uint8(trace.OpCancel), Seq: 5, Reqs: []uint64{2}, T0: 600},
		{Type: recDone, Call: callCancel, Seq: 5, T1: 610, Source: -1, StatTag: -1},
		{Type: recPost, Call: callWait, Op: uint8(trace.OpWait), Seq: 6, Reqs: []uint64{2}, T0: 700},
		{Type: recDone, Call: callWait, Seq: 4, T1: 710, Req: 2, Source: 1, StatTag: 7, SCount: 4, Hash: 0x77},
		{Type: recDone, Call: callWait, Seq: 6, T1: 710, Source: -1, StatTag: -1},
		{Type: recPost, Call: callFinalize, Op: uint8(trace.OpFinalize), Seq: 7, T0: 1200},
		{Type: recDone, Call: callFinalize, Seq: 7, T1: 1300, Source: -1, StatTag: -1},
	}
	r1 := []record{
		{Type: recPost, Call: callSend, Op: uint8(trace.OpSend), Seq: 0, Peer: 0, Tag: 7, Dtype: uint8(trace.Int32), Count: 4, Bytes: 16, T0: 450, Hash: 0x77},
		{Type: recDone, Call: callSend, Seq: 0, T1: 455, Source: -1, StatTag: -1, Hash: 0x77},
		{Type: recPost, Call: callFinalize, Op: uint8(trace.OpFinalize), Seq: 1, T0: 1200},
		{Type: recDone, Call: callFinalize, Seq: 1, T1: 1300, Source: -1, StatTag: -1},
	}
	for r, recs := range [][]record{r0, r1} {
		if err := os.WriteFile(SegmentPath(dir, r), encodeSegment(int32(r), 2, StateFinalized, recs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "t.db")
	if _, err := Merge(dir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rk, _ := loadTrace(t, out)
	if got, want := ops(rk[0]), "Irecv Cancel Wait Irecv Cancel Wait Finalize"; got != want {
		t.Fatalf("rank 0 ops %q, want %q", got, want)
	}
	cancelled, cancel, matched := rk[0][0], rk[0][1], rk[0][3]
	if !slices.Equal(cancel.post.Reqs, []uint64{1}) || cancel.post.Peer != 0 || cancel.post.Tag != 0 || cancel.post.Req != 0 {
		t.Errorf("Cancel post %+v: want over request 1, no envelope", cancel.post)
	}
	if d := cancelled.done; !d.Flag || d.Source != trace.NoRank || d.MatchRank != trace.NoRank || d.HashDone != 0 {
		t.Errorf("cancelled receive's done %+v: want Flag, no source, no match", d)
	}
	if d := matched.done; d.Flag || d.Source != 1 || d.MatchRank != 1 || d.MatchSeq != rk[1][0].post.Seq {
		t.Errorf("receive whose cancel failed: done %+v, want matched with rank 1's send", d)
	}
}
