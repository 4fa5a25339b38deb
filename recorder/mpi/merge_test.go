package mpi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// siteLine returns the 1-based line of the source that holds marker.
func siteLine(t testing.TB, src, marker string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("marker %q not in source", marker)
	return 0
}

type op struct {
	post, done trace.Event
	hasDone    bool
}

// loadTrace reads every rank's ops (compute ops left out) and the sites.
func loadTrace(t testing.TB, path string) (trace.Header, [][]op, map[uint32]trace.Site) {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	sites := map[uint32]trace.Site{}
	for _, s := range r.Sites() {
		sites[s.ID] = s
	}
	all := make([][]op, r.Ranks())
	for rk := range all {
		c := r.Rank(rk)
		idx := map[uint64]int{}
		var ev trace.Event
		var next uint64
		for c.Next(&ev) {
			e := ev
			e.Reqs = append([]uint64(nil), ev.Reqs...)
			if e.Kind == trace.KindPost {
				if e.Seq != next {
					t.Fatalf("rank %d: post seq %d, want %d", rk, e.Seq, next)
				}
				next++
				if e.Op == trace.OpCompute {
					continue
				}
				idx[e.Seq] = len(all[rk])
				all[rk] = append(all[rk], op{post: e})
				continue
			}
			if e.Op == trace.OpCompute {
				continue
			}
			i, ok := idx[e.Seq]
			if !ok || all[rk][i].hasDone {
				t.Fatalf("rank %d: done of seq %d without its post, or twice", rk, e.Seq)
			}
			all[rk][i].done, all[rk][i].hasDone = e, true
		}
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return r.Header(), all, sites
}

func ops(rank []op) string {
	var b []string
	for _, o := range rank {
		b = append(b, o.post.Op.String())
	}
	return strings.Join(b, " ")
}

const p2pC = `#include <mpi.h>
#include <string.h>
int main(int argc, char **argv) {
    int rank;
    int a[4] = {1, 2, 3, 4};
    double x[8];
    int any = 0;
    char payload[16];
    MPI_Request req;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(x, 0, sizeof x);
    memcpy(payload, "hello, p2ptrace", 16);
    if (rank == 0) {
        MPI_Send(a, 4, MPI_INT, 1, 5, MPI_COMM_WORLD); /* SITE:send */
        MPI_Isend(x, 8, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD, &req); /* SITE:isend */
        x[0] = 42; /* written before the Wait: an in-flight mutation */
        MPI_Wait(&req, MPI_STATUS_IGNORE); /* SITE:wait0 */
        MPI_Send(payload, 16, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    } else {
        MPI_Recv(a, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE:recv */
        MPI_Irecv(x, 8, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &req); /* SITE:irecv */
        MPI_Wait(&req, &st);
        MPI_Recv(payload, 16, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE:anyrecv */
    }
    MPI_Sendrecv(&rank, 1, MPI_INT, 1 - rank, 8, &any, 1, MPI_INT, 1 - rank, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE:sendrecv */
    MPI_Barrier(MPI_COMM_WORLD); /* SITE:barrier */
    MPI_Finalize();
    return 0;
}
`

func TestMergeP2P(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "p2p", p2pC)
	segdir := runMPI(t, 2, bin, false)
	if st, err := os.Stat(SegmentPath(segdir, 0)); err != nil {
		t.Error(err)
	} else if st.Size() > 64<<10 {
		t.Errorf("segment after MPI_Finalize: %d bytes: the prefaulted tail should be given back", st.Size())
	}
	out := filepath.Join(dir, "p2p.p2ptrace")
	res, err := Merge(segdir, out, MergeOptions{Command: []string{"mpirun", "-n", "2", bin}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Status != trace.StatusComplete || len(res.Ranks) != 2 {
		t.Fatalf("result %+v", res)
	}
	for _, re := range res.Ranks {
		if re.State != StateFinalized {
			t.Errorf("rank %d ended %v, want finalized", re.Rank, re.State)
		}
	}
	h, rk, sites := loadTrace(t, out)
	if !strings.HasPrefix(h.Backend, "Open MPI") && !strings.HasPrefix(h.Backend, "MPICH") {
		t.Errorf("backend %q", h.Backend)
	}
	if h.WorldSize != 2 || h.EagerLimit <= 0 || h.HashMode != "full" || h.Status != trace.StatusComplete {
		t.Errorf("header %+v", h)
	}
	t.Logf("backend %q eager %d", h.Backend, h.EagerLimit)
	if seg, err := readSegment(SegmentPath(segdir, 1)); err != nil {
		t.Fatal(err)
	} else if strings.HasPrefix(h.Backend, "Open MPI v4") && seg.hdr.Eager != 4096 {
		t.Errorf("segment eager limit %d, want 4096 (MPI_T btl_vader_eager_limit)", seg.hdr.Eager)
	}
	if got, want := ops(rk[0]), "Send Isend Wait Send Sendrecv Recv Barrier Finalize"; got != want {
		t.Fatalf("rank 0 ops %q, want %q", got, want)
	}
	if got, want := ops(rk[1]), "Recv Irecv Wait Recv Sendrecv Recv Barrier Finalize"; got != want {
		t.Fatalf("rank 1 ops %q, want %q", got, want)
	}
	at := func(rank, i int, marker string) {
		t.Helper()
		s, ok := sites[rk[rank][i].post.Site]
		want := siteLine(t, p2pC, marker)
		if !ok || s.Line != want || s.File != "p2p.c" && !strings.HasSuffix(s.File, "/p2p.c") || s.Function != "main" {
			t.Errorf("rank %d op %d (%s): site %+v, want p2p.c:%d in main", rank, i, rk[rank][i].post.Op, s, want)
		}
	}
	at(0, 0, "SITE:send")
	at(0, 1, "SITE:isend")
	at(0, 2, "SITE:wait0")
	at(1, 0, "SITE:recv")
	at(1, 1, "SITE:irecv")
	at(1, 3, "SITE:anyrecv")
	at(0, 4, "SITE:sendrecv")
	at(0, 5, "SITE:sendrecv")
	at(1, 6, "SITE:barrier")

	send, recv := rk[0][0], rk[1][0]
	if send.post.Peer != 1 || send.post.Tag != 5 || send.post.Dtype != trace.Int32 || send.post.Count != 4 || send.post.Bytes != 16 {
		t.Errorf("send post %+v", send.post)
	}
	a := []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}
	if want := xxhash.Sum64(a) | 1; send.post.HashPost != want || recv.done.HashDone != want {
		t.Errorf("hashes: send post %#x, recv done %#x, want xxhash %#x", send.post.HashPost, recv.done.HashDone, want)
	}
	if send.done.MatchRank != 1 || send.done.MatchSeq != recv.post.Seq || recv.done.MatchRank != 0 || recv.done.MatchSeq != send.post.Seq {
		t.Errorf("match: send done %+v recv done %+v", send.done, recv.done)
	}
	isend, wait := rk[0][1], rk[0][2]
	if isend.post.Req == 0 || len(wait.post.Reqs) != 1 || wait.post.Reqs[0] != isend.post.Req {
		t.Errorf("isend req %d, wait reqs %v", isend.post.Req, wait.post.Reqs)
	}
	if !isend.hasDone || isend.done.HashPost == 0 || isend.done.HashDone == 0 || isend.done.HashPost == isend.done.HashDone {
		t.Errorf("isend done: hash post %#x done %#x, want different (buffer written before Wait)", isend.done.HashPost, isend.done.HashDone)
	}
	if isend.done.Seq != isend.post.Seq || !wait.hasDone {
		t.Errorf("isend/wait dones %+v %+v", isend.done, wait.done)
	}
	irecv := rk[1][1]
	if irecv.post.Tag != trace.AnyTag || irecv.done.StatusTag != 6 || irecv.done.Source != 0 || irecv.done.StatusCnt != 8 {
		t.Errorf("irecv %+v / %+v", irecv.post, irecv.done)
	}
	if irecv.done.HashDone != isend.done.HashPost {
		t.Errorf("irecv got hash %#x, the isend posted %#x (eager copy at post)", irecv.done.HashDone, isend.done.HashPost)
	}
	anyr := rk[1][3]
	if anyr.post.Peer != trace.AnySource || anyr.done.Source != 0 || anyr.done.MatchRank != 0 || anyr.done.MatchSeq != rk[0][3].post.Seq {
		t.Errorf("any-source recv %+v / %+v", anyr.post, anyr.done)
	}
	if want := xxhash.Sum64([]byte("hello, p2ptrace\x00")) | 1; anyr.done.HashDone != want {
		t.Errorf("any-source recv hash %#x, want %#x", anyr.done.HashDone, want)
	}
	sr0, sr1 := rk[0][4], rk[1][5]
	if sr0.post.Op != trace.OpSendrecv || sr0.post.Peer != 1 || sr0.done.MatchRank != 1 || sr0.done.MatchSeq != sr1.post.Seq {
		t.Errorf("sendrecv %+v / %+v", sr0.post, sr0.done)
	}
	bar := rk[0][6]
	if bar.post.Count != 2 || bar.post.Comm != 0 || !bar.hasDone {
		t.Errorf("barrier %+v", bar.post)
	}
	fin := rk[1][7]
	if !fin.hasDone {
		t.Errorf("finalize without done")
	}
}
