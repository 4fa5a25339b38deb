package mpi

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// In each half (color rank%2) the ranks are reversed (key -rank), so comm
// ranks and world ranks differ: the highest world rank of the half sends to
// comm rank 1, the lowest world rank of the half.
const splitC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, srank, v = 0;
    MPI_Comm half, dup;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Comm_dup(half, &dup);
    MPI_Comm_rank(half, &srank);
    if (srank == 0) MPI_Send(&rank, 1, MPI_INT, 1, 3, half);
    else MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, half, MPI_STATUS_IGNORE);
    if (srank == 0) MPI_Send(&rank, 1, MPI_INT, 1, 4, dup);
    else MPI_Recv(&v, 1, MPI_INT, 0, 4, dup, MPI_STATUS_IGNORE);
    MPI_Barrier(half);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
`

func TestMergeCommSplit(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "split", splitC)
	segdir := runMPI(t, 4, bin, false)
	out := filepath.Join(dir, "split.p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	h, rk, _ := loadTrace(t, out)
	comm := map[int]int32{} // world rank -> comm id of its half
	dupc := map[int]int32{}
	for r := range 4 {
		if got, want := ops(rk[r]), map[bool]string{true: "Send Send Barrier Finalize", false: "Recv Recv Barrier Finalize"}[r >= 2]; got != want {
			t.Fatalf("rank %d: ops %q, want %q", r, got, want)
		}
		comm[r], dupc[r] = rk[r][0].post.Comm, rk[r][1].post.Comm
		if b := rk[r][2].post; b.Op != trace.OpBarrier || b.Count != 2 || b.Comm != comm[r] {
			t.Errorf("rank %d: barrier %+v, want count 2 on comm %d", r, b, comm[r])
		}
	}
	for _, pair := range [][2]int{{0, 2}, {1, 3}} {
		lo, hi := pair[0], pair[1]
		if comm[lo] != comm[hi] || dupc[lo] != dupc[hi] || comm[lo] == 0 || dupc[lo] == 0 || comm[lo] == dupc[lo] {
			t.Errorf("ranks %d,%d: comm ids %d/%d, dup %d/%d: want equal, nonzero, distinct", lo, hi, comm[lo], comm[hi], dupc[lo], dupc[hi])
		}
		// world rank hi is comm rank 0 of its half and sends to comm rank 1 = world rank lo
		s, rv := rk[hi][0], rk[lo][0]
		if s.post.Peer != int32(lo) || s.post.Tag != 3 {
			t.Errorf("rank %d send: peer %d tag %d, want world rank %d tag 3", hi, s.post.Peer, s.post.Tag, lo)
		}
		if rv.post.Peer != trace.AnySource || rv.done.Source != int32(hi) || rv.done.MatchRank != int32(hi) || rv.done.MatchSeq != s.post.Seq {
			t.Errorf("rank %d recv: %+v / %+v, want source %d", lo, rv.post, rv.done, hi)
		}
		if d := rk[lo][1]; d.post.Peer != int32(hi) || d.done.Source != int32(hi) || d.done.MatchRank != int32(hi) {
			t.Errorf("rank %d recv on dup: %+v / %+v", lo, d.post, d.done)
		}
	}
	if comm[0] == comm[1] {
		t.Errorf("both halves have comm id %d", comm[0])
	}
	// The header names each communicator's members, world ranks in the
	// communicator's order (key -rank: the higher world rank first), for
	// the wait-for graph of a stuck replay.
	want := map[int][]int{int(comm[0]): {2, 0}, int(dupc[0]): {2, 0}, int(comm[1]): {3, 1}, int(dupc[1]): {3, 1}}
	got := map[int][]int{}
	for _, g := range h.Comms {
		got[g.ID] = g.Ranks
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("header comms %v, want %v", got, want)
	}
}

// The groups {0} and {3,2,1} (key -rank: comm ranks and world ranks differ,
// and the remote group of rank 0 is larger than its local one) joined by
// MPI_Intercomm_create, which the shim does not intercept. On an
// intercommunicator dest, source and MPI_SOURCE are ranks of the remote
// group (MPI-3.1 sec. 6.6). Rank 0 sends to remote ranks 0..2 (world 3, 2,
// 1), each receives from MPI_ANY_SOURCE; world 3 answers on a dup of the
// intercomm; then world 1 and, 300 ms later, world 2 send to rank 0, which
// receives from MPI_ANY_SOURCE twice. The intercomm barrier is passed
// through, as every intercomm collective.
const intercommC = `#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, lrank, v = 0, i;
    MPI_Comm half, inter, dup;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, rank != 0, -rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank == 0 ? 3 : 0, 7, &inter);
    MPI_Comm_dup(inter, &dup);
    MPI_Comm_rank(inter, &lrank);
    if (rank == 0) {
        for (i = 0; i < 3; i++) MPI_Send(&rank, 1, MPI_INT, i, 10 + i, inter);
        MPI_Recv(&v, 1, MPI_INT, 0, 20, dup, MPI_STATUS_IGNORE);
        for (i = 0; i < 2; i++) MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 30, inter, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 10 + lrank, inter, &st);
        if (st.MPI_SOURCE != 0) abort();
        if (lrank == 0) MPI_Send(&rank, 1, MPI_INT, 0, 20, dup);
        if (rank == 2) usleep(300000);
        if (rank != 3) MPI_Send(&rank, 1, MPI_INT, 0, 30, inter);
    }
    MPI_Barrier(inter);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
`

// recordIntercomm records intercommC (with extraEnv) and returns its ranks' ops.
func recordIntercomm(t *testing.T, extraEnv ...string) [][]op {
	t.Helper()
	dir := t.TempDir()
	bin := compile(t, dir, "inter", intercommC)
	segdir := runMPI(t, 4, bin, false, extraEnv...)
	out := filepath.Join(dir, "inter.p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	h, rk, _ := loadTrace(t, out)
	// Each side of an intercommunicator records its own group under the
	// one id: the header leaves it out (its members are not one group).
	for _, g := range h.Comms {
		if len(rk[0]) > 3 && (g.ID == int(rk[0][0].post.Comm) || g.ID == int(rk[0][3].post.Comm)) {
			t.Errorf("header comms name the intercomm %d: %v", g.ID, g.Ranks)
		}
	}
	want := []string{"Send Send Send Recv Recv Recv Finalize", "Recv Send Finalize", "Recv Send Finalize", "Recv Send Finalize"}
	for r := range 4 {
		if got := ops(rk[r]); got != want[r] {
			t.Errorf("rank %d: ops %q, want %q (the intercomm barrier unrecorded)", r, got, want[r])
		}
		if len(rk[r]) < strings.Count(want[r], " ") {
			t.FailNow()
		}
	}
	return rk
}

func TestIntercommPeersAreRemoteGroupRanks(t *testing.T) {
	rk := recordIntercomm(t)
	inter, dup := rk[0][0].post.Comm, rk[0][3].post.Comm
	if inter == 0 || dup == 0 || inter == dup {
		t.Fatalf("intercomm id %d, its dup's %d: want nonzero, distinct", inter, dup)
	}
	for i, w := range []int32{3, 2, 1} { // remote rank i of rank 0
		s, rv := rk[0][i], rk[w][0]
		if s.post.Peer != w || s.post.Comm != inter {
			t.Errorf("rank 0 send %d: peer %d comm %d, want world rank %d comm %d", i, s.post.Peer, s.post.Comm, w, inter)
		}
		// the same id on the other side, and MPI_SOURCE (remote rank 0) as world rank 0
		if rv.post.Comm != inter || rv.post.Peer != trace.AnySource || rv.done.Source != 0 || rv.done.MatchRank != 0 || rv.done.MatchSeq != s.post.Seq {
			t.Errorf("rank %d recv: %+v / %+v, want comm %d, source 0, matching send %d", w, rv.post, rv.done, inter, i)
		}
	}
	if s, rv := rk[3][1], rk[0][3]; s.post.Peer != 0 || s.post.Comm != dup || rv.post.Peer != 3 || rv.post.Comm != dup || rv.done.MatchRank != 3 {
		t.Errorf("on the dup: send %+v, recv %+v / %+v: want 3 -> 0 on comm %d", s.post, rv.post, rv.done, dup)
	}
}

// TestIntercommForcedSource: check's re-run pins rank 0's first receive
// from MPI_ANY_SOURCE to world rank 2, which the shim must pass to MPI as
// remote rank 1 (world 2 sends 300 ms after world 1).
func TestIntercommForcedSource(t *testing.T) {
	rk := recordIntercomm(t, "P2PTRACE_FORCE_MATCH=0:0=2")
	if got := []int32{rk[0][4].done.Source, rk[0][5].done.Source}; got[0] != 2 || got[1] != 1 {
		t.Errorf("rank 0's receives from MPI_ANY_SOURCE took world ranks %v, want [2 1] (the first pinned to 2)", got)
	}
	// what MPI delivered, whatever the recorded source says: world 2's payload (its rank)
	if got, want := rk[0][4].done.HashDone, rk[2][1].post.HashPost; got != want {
		t.Errorf("rank 0's first receive from MPI_ANY_SOURCE got payload hash %#x, want world rank 2's %#x", got, want)
	}
	if p := rk[0][4].post.Peer; p != trace.AnySource {
		t.Errorf("pinned receive recorded with peer %d, want MPI_ANY_SOURCE as the program made it", p)
	}
}

// lazyIDsC uses a communicator made by MPI_Comm_create (world ranks 3, 1)
// and an intercommunicator of the parity halves {0,2} and {1,3}, neither
// made by a call the shim intercepts.
const lazyIDsC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, v = 0, ranks[2] = {3, 1};
    MPI_Group wg, g;
    MPI_Comm sub, half, inter;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, 2, ranks, &g);
    MPI_Comm_create(MPI_COMM_WORLD, g, &sub);
    if (rank == 3) MPI_Send(&rank, 1, MPI_INT, 1, 0, sub);
    if (rank == 1) MPI_Recv(&v, 1, MPI_INT, 0, 0, sub, MPI_STATUS_IGNORE);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 5, &inter);
    if (rank == 0) MPI_Send(&rank, 1, MPI_INT, 0, 1, inter);
    if (rank == 1) MPI_Recv(&v, 1, MPI_INT, 0, 1, inter, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
`

// The shim's ids, in Go: mix32 and comm_id_of of p2ptrace_shim.c, over the
// FNV-1a of world ranks (sep: the separator between an intercomm's groups).
func shimMix32(x uint64) uint32 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return uint32(x)
}

func shimLazyID(tag int32, groups ...[]uint32) int32 {
	x := uint64(0xcbf29ce484222325)
	for i, g := range groups {
		if i > 0 {
			x = (x ^ 0xffffffff) * 0x100000001b3
		}
		for _, w := range g {
			x = (x ^ uint64(w)) * 0x100000001b3
		}
	}
	parent := shimMix32(x)
	v := shimMix32(uint64(parent)<<32^uint64(uint32(tag))*0x9e3779b97f4a7c15) & 0x7fffffff
	if v == 0 {
		return 1
	}
	return int32(v)
}

// TestLazyCommIDs pins the ids of communicators the shim met without seeing
// them made: an intracomm's (world ranks in comm rank order, tag -3) as
// before intercomms were handled, so old traces keep their bytes; an
// intercomm's from both groups, the one holding world rank 0 first, the
// same on both sides (tag -4).
func TestLazyCommIDs(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "lazy", lazyIDsC)
	segdir := runMPI(t, 4, bin, false)
	out := filepath.Join(dir, "lazy.p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rk, _ := loadTrace(t, out)
	want := []string{"Send Finalize", "Recv Recv Finalize", "Finalize", "Send Finalize"}
	for r := range 4 {
		if got := ops(rk[r]); got != want[r] {
			t.Fatalf("rank %d: ops %q, want %q", r, got, want[r])
		}
	}
	sub := shimLazyID(-3, []uint32{3, 1})
	if a, b := rk[3][0].post.Comm, rk[1][0].post.Comm; a != sub || b != sub {
		t.Errorf("MPI_Comm_create's communicator: ids %d (rank 3), %d (rank 1), want %d", a, b, sub)
	}
	inter := shimLazyID(-4, []uint32{0, 2}, []uint32{1, 3})
	if a, b := rk[0][0].post.Comm, rk[1][1].post.Comm; a != inter || b != inter {
		t.Errorf("the intercomm: ids %d (rank 0), %d (rank 1), want %d on both sides", a, b, inter)
	}
	if s, r := rk[0][0].post, rk[1][1]; s.Peer != 1 || r.post.Peer != 0 || r.done.MatchRank != 0 {
		t.Errorf("across the intercomm: send %+v, recv %+v / %+v: want 0 -> 1", s, r.post, r.done)
	}
}
