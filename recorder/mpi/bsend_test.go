package mpi

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestMergeBufferAttach: MPI_Buffer_attach merges as a Buffer_attach op
// whose Count and Bytes are the size attached, MPI_Buffer_detach as a
// Buffer_detach op, neither with an envelope; the segment header's
// MPI_BSEND_OVERHEAD (offset 124) becomes the trace header's
// BsendOverhead, which says the trace records attaches. Segments of an
// older shim (0 there, its padding) give 0.
func TestMergeBufferAttach(t *testing.T) {
	r0 := []record{
		{Type: recPost, Call: callBufferAttach, Op: uint8(trace.OpBufferAttach), Seq: 0, Count: 208, Bytes: 208, T0: 100},
		{Type: recDone, Call: callBufferAttach, Seq: 0, T1: 110, Source: -1, StatTag: -1},
		{Type: recPost, Call: callBsend, Op: uint8(trace.OpBsend), Seq: 1, Peer: 1, Tag: 7, Dtype: uint8(trace.Int32), Count: 4, Bytes: 16, T0: 200, Hash: 0x77},
		{Type: recDone, Call: callBsend, Seq: 1, T1: 210, Source: -1, StatTag: -1, Hash: 0x77},
		{Type: recPost, Call: callBufferDetach, Op: uint8(trace.OpBufferDetach), Seq: 2, T0: 300},
		{Type: recDone, Call: callBufferDetach, Seq: 2, T1: 310, Source: -1, StatTag: -1},
		{Type: recPost, Call: callFinalize, Op: uint8(trace.OpFinalize), Seq: 3, T0: 1200},
		{Type: recDone, Call: callFinalize, Seq: 3, T1: 1300, Source: -1, StatTag: -1},
	}
	r1 := []record{
		{Type: recPost, Call: callRecv, Op: uint8(trace.OpRecv), Seq: 0, Peer: 0, Tag: 7, Dtype: uint8(trace.Int32), Count: 4, Bytes: 16, T0: 150},
		{Type: recDone, Call: callRecv, Seq: 0, T1: 250, Source: 0, StatTag: 7, SCount: 4, Hash: 0x77},
		{Type: recPost, Call: callFinalize, Op: uint8(trace.OpFinalize), Seq: 1, T0: 1200},
		{Type: recDone, Call: callFinalize, Seq: 1, T1: 1300, Source: -1, StatTag: -1},
	}
	for _, overhead := range []uint32{0, 96} {
		dir := t.TempDir()
		for r, recs := range [][]record{r0, r1} {
			b := encodeSegment(int32(r), 2, StateFinalized, recs)
			binary.LittleEndian.PutUint32(b[124:], overhead)
			if err := os.WriteFile(SegmentPath(dir, r), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(dir, "t.db")
		if _, err := Merge(dir, out, MergeOptions{}); err != nil {
			t.Fatal(err)
		}
		hdr, rk, _ := loadTrace(t, out)
		if hdr.BsendOverhead != int64(overhead) {
			t.Errorf("overhead %d: header BsendOverhead %d", overhead, hdr.BsendOverhead)
		}
		if got, want := ops(rk[0]), "Buffer_attach Bsend Buffer_detach Finalize"; got != want {
			t.Fatalf("rank 0 ops %q, want %q", got, want)
		}
		at, dt := rk[0][0].post, rk[0][2].post
		if at.Count != 208 || at.Bytes != 208 || at.Peer != 0 || at.Tag != 0 || dt.Peer != 0 || dt.Count != 0 {
			t.Errorf("attach %+v, detach %+v: want the size on the attach, no envelope", at, dt)
		}
	}
}
