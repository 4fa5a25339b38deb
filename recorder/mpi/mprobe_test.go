package mpi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestMergeMatchedProbe: a matched probe (MPI_Mprobe from any source) and
// the MPI_Mrecv of its message merge as a Probe and, right after it, a
// Recv from the status's source with the Mrecv's buffer; the Recv from any
// source the program made between the two cannot take the probed message
// (MPI 3.1 sec. 3.8.2): it matches rank 1's second send. An MPI_Imrecv's
// request is complete when posted: the Wait on it alone is no trace op.
// An MPI_Improbe that found nothing stays an Iprobe that answered no.
func TestMergeMatchedProbe(t *testing.T) {
	dir := t.TempDir()
	anySrc := int32(trace.AnySource)
	r0 := []record{
		{Type: recPost, Call: callImprobe, Op: uint8(trace.OpIprobe), Seq: 0, Peer: anySrc, Tag: 5, T0: 100, T1: 110},
		{Type: recDone, Call: callImprobe, Seq: 0, T1: 110, Source: -1, StatTag: -1},
		{Type: recPost, Call: callMprobe, Op: uint8(trace.OpProbe), Seq: 1, Peer: anySrc, Tag: 5, T0: 200},
		{Type: recDone, Call: callMprobe, Seq: 1, T1: 300, Flag: true, Source: 1, StatTag: 5, SCount: 16},
		{Type: recPost, Call: callRecv, Op: uint8(trace.OpRecv), Seq: 2, Peer: anySrc, Tag: 5, Dtype: uint8(trace.Int32), Count: 8, Bytes: 32, T0: 400},
		{Type: recDone, Call: callRecv, Seq: 2, T1: 500, Source: 1, StatTag: 5, SCount: 2, Hash: 0x22},
		{Type: recPost, Call: callMrecv, Op: uint8(trace.OpRecv), Seq: 3, Peer: anySrc, Tag: -1, Index: 2, Dtype: uint8(trace.Int32), Count: 4, Bytes: 16, T0: 600},
		{Type: recDone, Call: callMrecv, Seq: 3, T1: 700, Source: 1, StatTag: 5, SCount: 4, Hash: 0x44},
		{Type: recPost, Call: callImprobe, Op: uint8(trace.OpIprobe), Seq: 4, Peer: anySrc, Tag: 6, T0: 800, T1: 810},
		{Type: recDone, Call: callImprobe, Seq: 4, T1: 810, Flag: true, Source: 1, StatTag: 6, SCount: 4},
		{Type: recPost, Call: callImrecv, Op: uint8(trace.OpIrecv), Seq: 5, Peer: anySrc, Tag: -1, Index: 5, Dtype: uint8(trace.Int32), Count: 1, Bytes: 4, Req: 9, T0: 900, T1: 910},
		{Type: recPost, Call: callWait, Op: uint8(trace.OpWait), Seq: 6, Reqs: []uint64{9}, T0: 1000},
		{Type: recDone, Call: callWait, Seq: 5, T1: 1100, Req: 9, Source: 1, StatTag: 6, SCount: 1, Hash: 0x66},
		{Type: recDone, Call: callWait, Seq: 6, T1: 1100, Source: -1, StatTag: -1},
		{Type: recPost, Call: callFinalize, Op: uint8(trace.OpFinalize), Seq: 7, T0: 1200},
		{Type: recDone, Call: callFinalize, Seq: 7, T1: 1300, Source: -1, StatTag: -1},
	}
	var r1 []record
	for i, tag := range []int32{5, 5, 6} {
		n := []int64{4, 2, 1}[i]
		r1 = append(r1,
			record{Type: recPost, Call: callSend, Op: uint8(trace.OpSend), Seq: uint32(i), Peer: 0, Tag: tag, Dtype: uint8(trace.Int32), Count: n, Bytes: 4 * n, T0: uint64(50 + i*10), Hash: 1},
			record{Type: recDone, Call: callSend, Seq: uint32(i), T1: uint64(55 + i*10), Source: -1, StatTag: -1, Hash: 1})
	}
	r1 = append(r1, record{Type: recPost, Call: callFinalize, Op: uint8(trace.OpFinalize), Seq: 3, T0: 1200},
		record{Type: recDone, Call: callFinalize, Seq: 3, T1: 1300, Source: -1, StatTag: -1})
	for r, recs := range [][]record{r0, r1} {
		if err := os.WriteFile(SegmentPath(dir, r), encodeSegment(int32(r), 2, StateFinalized, recs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "t.db")
	res, err := Merge(dir, out, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Header.Findings) != 0 {
		t.Errorf("findings %+v, want none", res.Header.Findings)
	}
	_, rk, _ := loadTrace(t, out)
	if got, want := ops(rk[0]), "Iprobe Probe Recv Recv Iprobe Recv Finalize"; got != want {
		t.Fatalf("rank 0 ops %q, want %q", got, want)
	}
	ip, pr, mrecv, other, found, imrecv := rk[0][0], rk[0][1], rk[0][2], rk[0][3], rk[0][4], rk[0][5]
	if ip.done.Flag || found.post.Peer != trace.AnySource || !found.done.Flag || pr.post.Peer != trace.AnySource || pr.done.Source != 1 {
		t.Errorf("probes: %+v %+v / %+v %+v", ip.done, pr.post, found.post, found.done)
	}
	if mrecv.post.Seq != pr.post.Seq+1 || mrecv.post.Peer != 1 || mrecv.post.Tag != 5 || mrecv.post.Bytes != 16 || mrecv.post.Req != 0 ||
		mrecv.done.MatchRank != 1 || mrecv.done.MatchSeq != rk[1][0].post.Seq || mrecv.done.StatusCnt != 4 || mrecv.done.HashDone != 0x44 ||
		mrecv.post.PostWall != pr.done.DoneWall || mrecv.done.DoneWall != pr.done.DoneWall {
		t.Errorf("the Mrecv's receive %+v / %+v, want right after the probe, of rank 1's first send", mrecv.post, mrecv.done)
	}
	if other.post.Peer != trace.AnySource || other.done.MatchSeq != rk[1][1].post.Seq {
		t.Errorf("the Recv between probe and Mrecv matched send seq %d, want rank 1's second (%d)", other.done.MatchSeq, rk[1][1].post.Seq)
	}
	if imrecv.post.Seq != found.post.Seq+1 || imrecv.post.Peer != 1 || imrecv.post.Tag != 6 || imrecv.post.Req != 0 ||
		imrecv.done.MatchSeq != rk[1][2].post.Seq || imrecv.done.HashDone != 0x66 {
		t.Errorf("the Imrecv's receive %+v / %+v", imrecv.post, imrecv.done)
	}
}
