package mpi

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, r := range recs {
		extra := 8 * len(r.Reqs)
		if r.Type == recModule {
			extra = len(r.Path) + 1
		}
		n := recBase + (extra+7)&^7
		rb := make([]byte, n)
		le.PutUint16(rb, uint16(n))
		rb[2], rb[3], rb[4], rb[5] = r.Type, r.Call, r.Op, r.Dtype
		if r.Flag {
			rb[6] = 1
		}
		le.PutUint32(rb[8:], r.Seq)
		le.PutUint32(rb[12:], r.Module)
		le.PutUint32(rb[16:], uint32(r.Peer))
		le.PutUint32(rb[20:], uint32(r.Tag))
		le.PutUint32(rb[24:], uint32(r.Comm))
		le.PutUint32(rb[28:], uint32(r.Index))
		le.PutUint64(rb[32:], uint64(r.Count))
		le.PutUint64(rb[40:], uint64(r.Bytes))
		le.PutUint64(rb[48:], r.T0)
		le.PutUint64(rb[56:], r.T1)
		le.PutUint64(rb[64:], r.PC)
		le.PutUint64(rb[72:], r.Req)
		le.PutUint64(rb[80:], r.Hash)
		le.PutUint32(rb[88:], uint32(r.Source))
		le.PutUint32(rb[92:], uint32(r.StatTag))
		le.PutUint64(rb[96:], uint64(r.SCount))
		if r.Type == recModule {
			copy(rb[recBase:], r.Path)
		} else {
			le.PutUint32(rb[104:], uint32(len(r.Reqs)))
			for i, q := range r.Reqs {
				le.PutUint64(rb[recBase+8*i:], q)
			}
		}
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
	if res.Header.Backend != "Open MPI v4.1.4" || res.Header.EagerLimit != defaultOpenMPIEager || res.Header.Status != "complete" {
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
		{"missing", nil, []string{"no segment for rank 1"}},
		{"foreign", []byte(strings.Repeat("#!/bin/sh\necho hello\n", 300)), []string{"rank-1.seg", "bad magic"}},
		{"short", good[:100], []string{"rank-1.seg", "shorter than"}},
		{"truncated", good[:len(good)-50], []string{"rank-1.seg", "the file holds"}},
		{"bad record", func() []byte {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint16(b[segHdrSize:], 3)
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
	f.Add(encodeSegment(0, 2, StateFinalized, sampleRecs(1)))
	f.Add(encodeSegment(1, 2, StateBlocked, sampleRecs(0)[:3]))
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
	})
}
