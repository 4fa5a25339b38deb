package mpi

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// encodeSegment builds a segment as the shim writes it (for the decoder's tests).
func encodeSegment(rank, size int32, state RankState, recs []record) []byte {
	le := binary.LittleEndian
	b := make([]byte, segHdrSize)
	copy(b, segMagic)
	le.PutUint32(b[8:], segVersion)
	le.PutUint32(b[12:], segHdrSize)
	le.PutUint32(b[16:], uint32(rank))
	le.PutUint32(b[20:], uint32(size))
	le.PutUint32(b[24:], 1234)
	le.PutUint32(b[28:], uint32(state))
	le.PutUint64(b[32:], uint64(len(recs)))
	le.PutUint64(b[48:], 1_700_000_000_000_000_000)
	copy(b[128:], "Open MPI v4.1.4, package: test")
	var lastT uint64
	bases := map[uint32]uint64{}
	zz := func(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }
	for _, r := range recs {
		var mask uint64
		var f []byte
		uv := func(bit uint64, v uint64) {
			mask |= bit
			f = binary.AppendUvarint(f, v)
		}
		if r.Op != 0 {
			mask |= fOp
			f = append(f, r.Op)
		}
		if r.Dtype != 0 {
			mask |= fDtype
			f = append(f, r.Dtype)
		}
		if r.Flag {
			mask |= fFlag
			f = append(f, 1)
		}
		if r.Type != recPost && r.Seq != 0 {
			uv(fSeq, uint64(r.Seq))
		}
		if r.Module != 0 {
			uv(fModule, uint64(r.Module))
		}
		for _, x := range []struct {
			bit uint64
			v   int64
		}{{fPeer, int64(r.Peer)}, {fTag, int64(r.Tag)}, {fComm, int64(r.Comm)}, {fIndex, int64(r.Index)}, {fCount, r.Count}, {fBytes, r.Bytes}} {
			if x.v != 0 {
				uv(x.bit, zz(x.v))
			}
		}
		if r.T0 != 0 {
			uv(fT0, zz(int64(r.T0-lastT)))
		}
		if r.T1 != 0 {
			base := lastT
			if r.T0 != 0 {
				base = r.T0
			}
			uv(fT1, zz(int64(r.T1-base)))
		}
		pc := r.PC
		if r.Type == recModule {
			bases[r.Module] = r.PC
		} else if pc != 0 {
			pc -= bases[r.Module]
		}
		if pc != 0 {
			uv(fPC, pc)
		}
		if r.Req != 0 {
			uv(fReq, r.Req)
		}
		if r.Hash != 0 {
			mask |= fHash
			f = binary.LittleEndian.AppendUint64(f, r.Hash)
		}
		for _, x := range []struct {
			bit uint64
			v   int64
		}{{fSource, int64(r.Source)}, {fStag, int64(r.StatTag)}, {fSCount, r.SCount}} {
			if x.v != 0 {
				uv(x.bit, zz(x.v))
			}
		}
		if len(r.Reqs) > 0 {
			uv(fReqs, uint64(len(r.Reqs)))
			var prev uint64
			for _, q := range r.Reqs {
				f = binary.AppendUvarint(f, zz(int64(q-prev)))
				prev = q
			}
		}
		if r.Path != "" {
			uv(fPath, uint64(len(r.Path)))
			f = append(f, r.Path...)
		}
		if r.Addr != 0 {
			uv(fAddr, r.Addr)
			uv(fSpan, uint64(r.Span))
		}
		if r.Site != 0 {
			uv(fSite, uint64(r.Site))
		}
		if r.Frame != 0 {
			uv(fFrame, r.Frame)
		}
		if r.Addr2 != 0 {
			uv(fAddr2, r.Addr2)
			f = binary.AppendUvarint(f, uint64(r.Span2))
		}
		if r.Heap != 0 || r.Heap2 != 0 {
			uv(fHeap, uint64(r.Heap))
			f = binary.AppendUvarint(f, uint64(r.Heap2))
		}
		if r.CType != 0 || r.CType2 != 0 {
			uv(fCType, uint64(r.CType))
			f = binary.AppendUvarint(f, uint64(r.CType2))
		}
		switch {
		case r.T1 != 0:
			lastT = r.T1
		case r.T0 != 0:
			lastT = r.T0
		}
		rb := binary.LittleEndian.AppendUint32(nil, 0)
		rb = append(rb, r.Call)
		rb = binary.AppendUvarint(rb, mask)
		rb = append(rb, f...)
		le.PutUint32(rb, uint32(len(rb))|uint32(r.Type)<<24)
		b = append(b, rb...)
	}
	le.PutUint64(b[40:], uint64(len(b)-segHdrSize))
	return b
}

// sampleRecs is rank 0 of a small job: Isend, Waitsome, Send, Finalize.
func sampleRecs(peer int32) []record {
	return []record{
		{Type: recModule, Module: 1, PC: 0x1000, Path: "/nonexistent/a.out"},
		{Type: recPost, Call: callIsend, Op: 6, Seq: 0, Module: 1, PC: 0x1234, Peer: peer, Tag: 3, Dtype: 2, Count: 1, Bytes: 4, T0: 10, T1: 20, Req: 1, Hash: 0x55},
		{Type: recPost, Call: callWaitsome, Seq: 1, Module: 1, PC: 0x1240, T0: 5000, Reqs: []uint64{1}},
		{Type: recDone, Call: callWaitsome, Seq: 0, T1: 5100, Req: 1, Hash: 0x55, Source: -1},
		{Type: recDone, Call: callWaitsome, Seq: 1, T1: 5200, Flag: true, Reqs: []uint64{1}, Source: -1},
		{Type: recPost, Call: callRecv, Op: 5, Seq: 2, Module: 1, PC: 0x1250, Peer: peer, Tag: 3, Dtype: 2, Count: 1, Bytes: 4, T0: 5300},
		{Type: recDone, Call: callRecv, Seq: 2, T1: 5400, Source: peer, StatTag: 3, SCount: 1, Hash: 0x55},
		{Type: recPost, Call: callFinalize, Op: 24, Seq: 3, Module: 1, PC: 0x1260, T0: 9000},
		{Type: recDone, Call: callFinalize, Seq: 3, T1: 9100},
	}
}

func writeSegments(t *testing.T, dir string) {
	t.Helper()
	for r := range int32(2) {
		if err := os.WriteFile(SegmentPath(dir, int(r)), encodeSegment(r, 2, StateFinalized, sampleRecs(1-r)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMergeSynthetic(t *testing.T) {
	dir := t.TempDir()
	writeSegments(t, dir)
	out := filepath.Join(dir, "t.p2ptrace")
	res, err := Merge(dir, out, MergeOptions{Command: []string{"a.out"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Backend != "Open MPI v4.1.4" || res.Header.EagerLimit != defaultOpenMPIEager-openMPIEagerHeader || res.Header.Status != "complete" {
		t.Errorf("header %+v", res.Header)
	}
	_, rk, _ := loadTrace(t, out)
	if got := ops(rk[0]); got != "Isend Waitall Recv Finalize" {
		t.Errorf("ops %q", got)
	}
	if is := rk[0][0]; is.done.MatchRank != 1 || is.done.MatchSeq != rk[1][2].post.Seq {
		t.Errorf("isend matched %d/%d", is.done.MatchRank, is.done.MatchSeq)
	}
}

func TestMergeErrors(t *testing.T) {
	dir := t.TempDir()
	writeSegments(t, dir)
	good, _ := os.ReadFile(SegmentPath(dir, 1))
	out := filepath.Join(dir, "t.p2ptrace")
	for _, tc := range []struct {
		name  string
		data  []byte // rank 1's segment; nil: missing
		wants []string
	}{
		{"foreign", []byte(strings.Repeat("#!/bin/sh\necho hello\n", 300)), []string{"rank-1.seg", "bad magic"}},
		{"short", good[:100], []string{"rank-1.seg", "shorter than"}},
		{"truncated", good[:len(good)-50], []string{"rank-1.seg", "the file holds"}},
		{"bad record", func() []byte {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(b[segHdrSize:], 3|recModule<<24)
			return b
		}(), []string{"rank-1.seg", "bad length"}},
		{"newer", func() []byte {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(b[8:], 9)
			return b
		}(), []string{"rank-1.seg", "version 9"}},
		{"other size", encodeSegment(1, 3, StateFinalized, nil), []string{"disagree on the world size"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(SegmentPath(dir, 1))
			if tc.data != nil {
				os.WriteFile(SegmentPath(dir, 1), tc.data, 0o644)
			}
			_, err := Merge(dir, out, MergeOptions{Force: true})
			if err == nil {
				t.Fatal("merge succeeded")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.data != nil && !strings.Contains(tc.name, "size") && !errors.Is(err, ErrSegment) {
				t.Errorf("error %v does not wrap ErrSegment", err)
			}
		})
	}
	if _, err := Merge(t.TempDir(), out, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "no segments") {
		t.Errorf("empty dir: %v", err)
	}
}

func TestReadLiveStateErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadLiveState(SegmentPath(dir, 0)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(dir, "x.seg")
	os.WriteFile(p, make([]byte, segHdrSize), 0o644) // created, header not yet written
	if _, err := ReadLiveState(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("zero header: %v", err)
	}
	os.WriteFile(p, []byte("garbage"), 0o644)
	if _, err := ReadLiveState(p); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("short foreign file: %v", err)
	}
	os.WriteFile(p, []byte(strings.Repeat("garbage!", 1000)), 0o644)
	if _, err := ReadLiveState(p); !errors.Is(err, ErrSegment) {
		t.Errorf("foreign file: %v", err)
	}
	b := encodeSegment(1, 2, StateBlocked, nil)
	binary.LittleEndian.PutUint32(b[84:], callRecv)
	os.WriteFile(p, b, 0o644)
	ls, err := ReadLiveState(p)
	if err != nil || ls != (LiveState{Rank: 1, Size: 2, PID: 1234, State: StateBlocked, Blocked: "MPI_Recv"}) {
		t.Errorf("live state %+v, %v", ls, err)
	}
}

// FuzzSegment feeds the decoder and the merge's preparation arbitrary
// bytes: errors, never panics.
func FuzzSegment(f *testing.F) {
	valid := [][]byte{
		encodeSegment(0, 2, StateFinalized, sampleRecs(1)),
		encodeSegment(1, 2, StateBlocked, sampleRecs(0)[:3]),
		encodeSegment(0, 2, StateFinalized, rmaSeedRecs()),
		encodeSegment(0, 2, StateFinalized, releasedSeedRecs()),
		encodeSegment(0, 1, StateFinalized, readySeedRecs()),
	}
	for i, b := range valid {
		// A seed the decoder refuses reaches none of the rules after it.
		s, err := decodeSegment(b)
		if err == nil {
			_, err = prepare(s)
		}
		if err != nil {
			f.Fatalf("seed %d does not decode: %v", i, err)
		}
		f.Add(b)
	}
	f.Add([]byte("P2PTSEG1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseHeader(b)
		s, err := decodeSegment(b)
		if err != nil {
			if !errors.Is(err, ErrSegment) {
				t.Fatalf("error %v does not wrap ErrSegment", err)
			}
			return
		}
		rd, err := prepare(s)
		if err != nil {
			return
		}
		if s.hdr.Size > 64 {
			return
		}
		ranks := make([]*rankData, s.hdr.Size)
		for i := range ranks {
			ranks[i] = rd
		}
		match(ranks)
		// The rules that read records the matching does not: one-sided
		// accesses, flushes, post and start groups, persistent inits.
		site := pcSites("f.c")
		rmaFindings(ranks, site)
		unstartedRequests(ranks, site)
		recvWriteFindings(0, rd, site)
		releasedFindings(0, rd, site)
	})
}

// TestMergeUninitializedSegment: a rank killed inside MPI_Init (another
// rank aborted early) leaves a segment whose header is all zero, or an
// empty file (killed between creating and sizing it: seen in CI, where
// rank 0 aborted on MPI_ERR_COMM as rank 1 started): a rank without calls,
// the job crashed.
func TestMergeUninitializedSegment(t *testing.T) {
	for name, seg := range map[string][]byte{"zero header": make([]byte, 1<<20), "empty file": nil} {
		dir := t.TempDir()
		writeSegments(t, dir)
		os.WriteFile(SegmentPath(dir, 0), seg, 0o644)
		res, err := Merge(dir, filepath.Join(dir, "t.p2ptrace"), MergeOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Header.Status != "crashed" || res.Header.WorldSize != 2 || res.Header.Backend != "Open MPI v4.1.4" ||
			res.Ranks[0].State != StateRunning || !strings.Contains(res.Ranks[0].Error, "MPI_Init") {
			t.Errorf("%s: result %+v", name, res)
		}
	}
	dir := t.TempDir()
	writeSegments(t, dir)
	os.WriteFile(SegmentPath(dir, 0), make([]byte, 1<<20), 0o644)
	os.WriteFile(SegmentPath(dir, 1), make([]byte, 1<<20), 0o644)
	if _, err := Merge(dir, filepath.Join(dir, "t2.p2ptrace"), MergeOptions{}); err == nil || !strings.Contains(err.Error(), "MPI_Init") {
		t.Errorf("all uninitialized: %v", err)
	}
}

// readySeedRecs are a rank's records of a ready send to itself before the
// receive that takes it: a seed whose merge writes a ready send.
func readySeedRecs() []record {
	recs := sampleRecs(0)
	recs[1].Call, recs[1].Op = callIrsend, uint8(trace.OpIrsend)
	return recs
}

// releasedSeedRecs are a rank's records of a post whose heap block was
// freed and a window whose frame returned, both while in use: a seed that
// reaches releasedFindings.
func releasedSeedRecs() []record {
	recs := sampleRecs(1)
	return append(recs[:len(recs)-2:len(recs)-2],
		record{Type: recWrite, Op: writeFreed, Flag: true, Call: callRecv, Seq: 0, Module: 1, PC: 0x1248},
		record{Type: recRMA, Call: callWinCreate, Comm: 3, Count: 4, Bytes: 64, Module: 1, PC: 0x1010},
		record{Type: recRMA, Op: rmaReleased, Call: callWinFree, Comm: 3, Module: 1, PC: 0x1020},
		recs[len(recs)-2], recs[len(recs)-1])
}

// rmaSeedRecs are a rank's records of a window, a start epoch with its
// group, an accumulate, a flush, the epoch's end and a post: a seed that
// reaches the rules of one-sided records.
func rmaSeedRecs() []record {
	return []record{
		{Type: recModule, Module: 1, PC: 0x1000, Path: "/nonexistent/a.out"},
		{Type: recRMA, Call: callWinCreate, Comm: 3, Count: 4, Bytes: 64, Module: 1, PC: 0x1010},
		{Type: recRMA, Call: callWinStart, Op: rmaGroup, Comm: 3, Req: 1, Reqs: []uint64{0, 1}},
		{Type: recRMA, Call: callAccumulate, Comm: 3, Peer: 1, Bytes: 4, Flag: true, Op: rmaEpochStart, Source: 1, StatTag: 3 | 4<<8, Tag: 3},
		{Type: recRMA, Call: callWinFlush, Op: rmaFlush, Comm: 3, Peer: 1},
		{Type: recRMA, Call: callWinComplete, Op: rmaEpochEnd, Peer: -1, Req: 1},
		{Type: recRMA, Call: callWinPost, Op: rmaGroup, Comm: 3, Reqs: []uint64{1}},
		// A lock_all epoch: an Rget whose Wait ended it, an Rput after.
		{Type: recRMA, Call: callRget, Comm: 3, Peer: 1, Bytes: 4, Flag: true, Op: rmaEpochShared, Source: 2, Req: 7},
		{Type: recRMA, Call: callWait, Op: rmaReqDone, Comm: 3, Req: 7},
		{Type: recRMA, Call: callRput, Comm: 3, Peer: 1, Bytes: 4, Flag: true, Op: rmaEpochShared, Source: 2, Req: 8},
		{Type: recRMA, Call: callWinUnlockAll, Op: rmaEpochEnd, Peer: -1, Req: 2},
		// A lock between fences that made an epoch (the Put after it).
		{Type: recRMA, Call: callWinLock, Op: rmaMixed, Comm: 3, Index: 1, Peer: 1},
		{Type: recRMA, Call: callPut, Comm: 3, Peer: 1, Bytes: 4, Index: 1, Req: 9},
	}
}
