package mpi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestMergeVCounts pins the v collectives' rule (vcountFindings) on three
// ranks' records: a finding per call whose members disagree on what one
// sends another (a Gatherv root that expects more than a rank sends, an
// Alltoallv, a Reduce_scatter whose recvcounts differ), none for calls that
// agree (an Allgatherv, an Alltoallv whose vectors are not uniform), none for a vector with a negative count (Open MPI's
// MPI_ERR_COUNT is that finding), none for a call not every member made
// (the job ended first), and the counts never reach the trace's events.
func TestMergeVCounts(t *testing.T) {
	dir := t.TempDir()
	type call struct {
		c, op     uint8
		root      int32
		bytes     int64
		counts    []uint64
		skipRanks []int // ranks that do not make it
	}
	calls := []call{
		// 1: Gatherv, root 0 expects 4, 8, 12 bytes; rank 2 sends 8.
		{c: callGatherv, op: uint8(trace.OpGatherv), root: 0, counts: []uint64{4, 8, 12}},
		// 2: Allgatherv, everyone expects 4, 8, 12 and each sends that: clean.
		{c: callAllgatherv, op: uint8(trace.OpAllgatherv), root: -1, counts: []uint64{4, 8, 12}},
		// 3: Alltoallv, 4 bytes each way but rank 0 sends rank 1 eight, which
		// rank 1 expects from rank 0: clean (vectors of a sender and a
		// receiver compared at the right entries).
		{c: callAlltoallv, op: uint8(trace.OpAlltoallv), root: -1, counts: []uint64{4, 4, 4, 4, 4, 4}},
		// 4: Alltoallv, rank 1 sends rank 2 eight bytes, which expects 4.
		{c: callAlltoallv, op: uint8(trace.OpAlltoallv), root: -1, counts: []uint64{4, 4, 4, 4, 4, 4}},
		// 5: Reduce_scatter, rank 2's recvcounts differ.
		{c: callReduceScatter, op: uint8(trace.OpReduceScatter), root: -1, counts: []uint64{4, 4, 4}},
		// 6: Scatterv with a negative count at the root: MPI's error, not compared.
		{c: callScatterv, op: uint8(trace.OpScatterv), root: 0, counts: []uint64{4, ^uint64(0), 4}},
		// 7: Gatherv rank 2 never made (it ended): not compared.
		{c: callGatherv, op: uint8(trace.OpGatherv), root: 0, counts: []uint64{4, 4, 12}, skipRanks: []int{2}},
	}
	for r := range 3 {
		recs := []record{{Type: recModule, Module: 1, PC: 0x1000, Path: "/nonexistent/a.out"}}
		seq := uint32(0)
		for k, c := range calls {
			if len(c.skipRanks) > 0 && c.skipRanks[0] == r {
				continue
			}
			p := record{Type: recPost, Call: c.c, Op: c.op, Seq: seq, Module: 1, PC: 0x1100 + uint64(k)*0x10,
				Peer: c.root, Tag: int32(r), Count: 3, Dtype: 2, T0: uint64(seq+1) * 10}
			own := []int64{4, 8, 12}[r] // what this rank sends in a Gatherv/Allgatherv
			vc := append([]uint64(nil), c.counts...)
			switch c.c {
			case callGatherv:
				p.Bytes = own
				if r == 2 {
					p.Bytes = 8
				}
				if r != 0 {
					vc = nil
				}
			case callScatterv:
				p.Bytes = 4
				if r != 0 {
					vc = nil
				}
			case callAllgatherv:
				p.Bytes = own
			case callAlltoallv:
				p.Bytes = 12
				if k == 2 && r == 0 {
					vc[1] = 8 // sends rank 1 eight bytes...
				}
				if k == 2 && r == 1 {
					vc[3+0] = 8 // ...which it expects from rank 0
				}
				if k == 3 && r == 1 {
					vc[2] = 8 // sends rank 2 eight bytes
				}
			case callReduceScatter:
				p.Bytes = 4
				if r == 2 {
					vc[0] = 8
				}
			}
			p.Reqs = vc
			recs = append(recs, p, record{Type: recDone, Call: c.c, Seq: seq, T1: uint64(seq+1)*10 + 5})
			seq++
		}
		recs = append(recs, record{Type: recPost, Call: callFinalize, Op: uint8(trace.OpFinalize), Seq: seq, Module: 1, PC: 0x1900, T0: 1000},
			record{Type: recDone, Call: callFinalize, Seq: seq, T1: 1005})
		state := StateFinalized
		if r == 2 {
			state = StateRunning // it ended before the last Gatherv
		}
		if err := os.WriteFile(SegmentPath(dir, r), encodeSegment(int32(r), 3, state, recs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "t.p2ptrace")
	res, err := Merge(dir, out, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range findingTexts(res.Header.Findings) {
		if strings.HasPrefix(s, "collective-mismatch") {
			got = append(got, s)
		}
	}
	want := []string{
		"collective-mismatch [0 2]: collective call 1 on the world (MPI_Gatherv): the root, rank 0, expects 12 bytes from rank 2, which sends 8: the type signatures differ in size (MPI-3.1 sec. 5.5) @ a.out+0x100 a.out+0x100",
		"collective-mismatch [1 2]: collective call 4 on the world (MPI_Alltoallv): rank 1 sends 8 bytes to rank 2, which expects 4: the type signatures differ in size (MPI-3.1 sec. 5.8) @ a.out+0x130 a.out+0x130",
		"collective-mismatch [0 2]: collective call 5 on the world (MPI_Reduce_scatter): rank 0's recvcounts give rank 0 4 bytes, rank 2's give it 8: the recvcounts must be identical on every member (MPI-3.1 sec. 5.10.1) @ a.out+0x140 a.out+0x140",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range res.Header.Findings {
		if f.Kind == "collective-mismatch" && (f.Collective == nil || f.Collective.Comm != 0) {
			t.Errorf("finding %q names collective %+v", f.Message, f.Collective)
		}
	}
	_, rk, _ := loadTrace(t, out)
	for r, ops := range rk {
		for _, o := range ops {
			if o.post.Op.IsCollective() && len(o.post.Reqs) != 0 {
				t.Errorf("rank %d %s seq %d: the trace event carries the counts as Reqs %v", r, o.post.Op, o.post.Seq, o.post.Reqs)
			}
		}
	}
}

// TestMergeAllgatherSendSide pins the send side of MPI_Allgather and
// MPI_Alltoall (MPI-3.1 secs. 5.7, 5.8: what each member sends each other
// is what that one receives from it): each member's record holds its own
// send block (one count), its size what it receives from each. A finding
// when they differ, also when every member agrees with the others; none
// for equal sides, for MPI_IN_PLACE (no count), and none when the members'
// receive blocks differ (the engine's finding, the calls' sizes).
func TestMergeAllgatherSendSide(t *testing.T) {
	dir := t.TempDir()
	type call struct {
		c, op uint8
		recv  []int64  // by rank: the receive block
		send  []uint64 // by rank: the send block (none: MPI_IN_PLACE)
	}
	calls := []call{
		// 1: each sends 4 and expects 8 from each.
		{callAllgather, uint8(trace.OpAllgather), []int64{8, 8}, []uint64{4, 4}},
		// 2: equal sides, rank 1 in place: clean.
		{callAllgather, uint8(trace.OpAllgather), []int64{8, 8}, []uint64{8, 0}},
		// 3: Alltoall, rank 1 sends 16 where each expects 8.
		{callAlltoall, uint8(trace.OpAlltoall), []int64{8, 8}, []uint64{8, 16}},
		// 4: the receive blocks differ: not this rule's.
		{callAllgather, uint8(trace.OpAllgather), []int64{8, 4}, []uint64{4, 4}},
	}
	for r := range 2 {
		recs := []record{{Type: recModule, Module: 1, PC: 0x1000, Path: "/nonexistent/a.out"}}
		for k, c := range calls {
			seq := uint32(k)
			p := record{Type: recPost, Call: c.c, Op: c.op, Seq: seq, Module: 1, PC: 0x1100 + uint64(k)*0x10,
				Peer: -1, Tag: int32(r), Count: 2, Dtype: 2, Bytes: c.recv[r], T0: uint64(seq+1) * 10}
			if c.send[r] != 0 {
				p.Reqs = []uint64{c.send[r]}
			}
			recs = append(recs, p, record{Type: recDone, Call: c.c, Seq: seq, T1: uint64(seq+1)*10 + 5})
		}
		n := uint32(len(calls))
		recs = append(recs, record{Type: recPost, Call: callFinalize, Op: uint8(trace.OpFinalize), Seq: n, Module: 1, PC: 0x1900, T0: 1000},
			record{Type: recDone, Call: callFinalize, Seq: n, T1: 1005})
		if err := os.WriteFile(SegmentPath(dir, r), encodeSegment(int32(r), 2, StateFinalized, recs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Merge(dir, filepath.Join(dir, "t.p2ptrace"), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range findingTexts(res.Header.Findings) {
		if strings.HasPrefix(s, "collective-mismatch") {
			got = append(got, s)
		}
	}
	want := []string{
		"collective-mismatch [0 1]: collective call 1 on the world (MPI_Allgather): rank 0 sends 4 bytes to each member, which each expect 8 from it: the type signatures differ in size (MPI-3.1 sec. 5.7) @ a.out+0x100 a.out+0x100",
		"collective-mismatch [0 1]: collective call 3 on the world (MPI_Alltoall): rank 1 sends 16 bytes to each member, which each expect 8 from it: the type signatures differ in size (MPI-3.1 sec. 5.8) @ a.out+0x120 a.out+0x120",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
