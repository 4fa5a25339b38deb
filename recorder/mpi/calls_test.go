package mpi

import (
	"encoding/binary"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

const callsC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, a = 0, b[2] = {0, 0}, v[4] = {5, 6, 7, 8}, got[2], x = 1, flag = 0, idx[2], oc, left, i;
    MPI_Request p, r[2];
    MPI_Status st;
    MPI_Datatype vec;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    if (rank == 0) {
        MPI_Send_init(&a, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, &p);
        for (i = 0; i < 2; i++) { a = i; MPI_Start(&p); MPI_Wait(&p, MPI_STATUS_IGNORE); }
        MPI_Request_free(&p); /* inactive: nothing to replay */
        MPI_Isend(&a, 1, MPI_INT, 1, 11, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(&x, 1, MPI_INT, 1, 12, MPI_COMM_WORLD, &r[1]);
        for (left = 2; left > 0; left -= oc) MPI_Waitsome(2, r, &oc, idx, MPI_STATUSES_IGNORE);
        MPI_Send(&x, 1, MPI_INT, 1, 13, MPI_COMM_WORLD);
        MPI_Send(v, 1, vec, 1, 14, MPI_COMM_WORLD);
        MPI_Sendrecv_replace(&x, 1, MPI_INT, 1, 15, 1, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Isend(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MPI_Isend(&x, 1, MPI_INT, 1, 16, MPI_COMM_WORLD, &r[0]);
        r[1] = MPI_REQUEST_NULL;
        do MPI_Testany(2, r, &i, &flag, MPI_STATUS_IGNORE); while (!flag);
        MPI_Isend(&x, 1, MPI_INT, 1, 17, MPI_COMM_WORLD, &r[0]);
        MPI_Request_free(&r[0]);
    } else {
        MPI_Recv_init(&a, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, &p);
        for (i = 0; i < 2; i++) { MPI_Startall(1, &p); MPI_Wait(&p, MPI_STATUS_IGNORE); }
        MPI_Request_free(&p);
        MPI_Irecv(&b[0], 1, MPI_INT, 0, 11, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(&b[1], 1, MPI_INT, 0, 12, MPI_COMM_WORLD, &r[1]);
        for (left = 2; left > 0; left -= oc) MPI_Testsome(2, r, &oc, idx, MPI_STATUSES_IGNORE);
        do MPI_Iprobe(0, 13, MPI_COMM_WORLD, &flag, &st); while (!flag);
        MPI_Probe(0, 13, MPI_COMM_WORLD, &st);
        MPI_Recv(&x, 1, MPI_INT, 0, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(got, 2, MPI_INT, 0, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv_replace(&x, 1, MPI_INT, 0, 15, 0, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        r[0] = MPI_REQUEST_NULL;
        MPI_Irecv(&x, 1, MPI_INT, 0, 16, MPI_COMM_WORLD, &r[1]);
        MPI_Waitany(2, r, &i, MPI_STATUS_IGNORE);
        MPI_Recv(&x, 1, MPI_INT, 0, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Type_free(&vec);
    MPI_Finalize();
    return 0;
}
`

func TestMergeCalls(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "calls", callsC)
	segdir := runMPI(t, 2, bin, false)
	out := filepath.Join(dir, "calls.p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rk, _ := loadTrace(t, out)
	want0 := regexp.MustCompile(`^Isend Wait Isend Wait Isend Isend (Waitall )+Send Send Sendrecv Recv Isend (Test )+Isend Request.Free Finalize$`)
	want1 := regexp.MustCompile(`^Irecv Wait Irecv Wait Irecv Irecv (Test(all)? )+(Iprobe )+Probe Recv Recv Sendrecv Recv Irecv Waitany Recv Finalize$`)
	if got := ops(rk[0]); !want0.MatchString(got) {
		t.Fatalf("rank 0 ops %q, want %s", got, want0)
	}
	if got := ops(rk[1]); !want1.MatchString(got) {
		t.Fatalf("rank 1 ops %q, want %s", got, want1)
	}
	find := func(rank int, kind trace.Op, tag int32) op {
		t.Helper()
		for _, o := range rk[rank] {
			if o.post.Op == kind && o.post.Tag == tag {
				return o
			}
		}
		t.Fatalf("rank %d: no %s with tag %d", rank, kind, tag)
		return op{}
	}
	// Persistent requests: a fresh request id per Start, each waited for.
	s0, w0, s1, w1 := rk[0][0], rk[0][1], rk[0][2], rk[0][3]
	if s0.post.Req == 0 || s1.post.Req == s0.post.Req || w0.post.Reqs[0] != s0.post.Req || w1.post.Reqs[0] != s1.post.Req {
		t.Errorf("persistent sends: reqs %d %d, waits %v %v", s0.post.Req, s1.post.Req, w0.post.Reqs, w1.post.Reqs)
	}
	if s0.done.HashPost == s1.done.HashPost {
		t.Errorf("the two Starts sent different data but hash alike")
	}
	r0, r1 := rk[1][0], rk[1][2]
	if r0.done.MatchRank != 0 || r0.done.MatchSeq != s0.post.Seq || r1.done.MatchSeq != s1.post.Seq || s1.done.MatchSeq != r1.post.Seq {
		t.Errorf("persistent matches: %+v %+v", r0.done, r1.done)
	}
	// Waitsome became Waitall over the completed requests.
	var waited []uint64
	for _, o := range rk[0][6:] {
		if o.post.Op != trace.OpWaitall {
			break
		}
		waited = append(waited, o.post.Reqs...)
	}
	if len(waited) != 2 || waited[0] == waited[1] {
		t.Errorf("Waitsome: waited for %v, want both requests once", waited)
	}
	// Iprobe/Probe.
	var lastIprobe op
	for _, o := range rk[1] {
		if o.post.Op == trace.OpIprobe {
			lastIprobe = o
		}
	}
	if !lastIprobe.done.Flag || lastIprobe.done.Source != 0 || lastIprobe.done.StatusTag != 13 || lastIprobe.done.StatusCnt != 4 {
		t.Errorf("last Iprobe %+v", lastIprobe.done)
	}
	if pr := find(1, trace.OpProbe, 13); pr.done.Source != 0 || pr.done.StatusTag != 13 || pr.post.Peer != 0 {
		t.Errorf("Probe %+v / %+v", pr.post, pr.done)
	}
	// Derived datatype: hashed through MPI_Pack (elements 5 and 7), recorded
	// by its signature (int32 x 2).
	packed := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 5), 7)
	want := xxhash.Sum64(packed) | 1
	ds, dr := find(0, trace.OpSend, 14), find(1, trace.OpRecv, 14)
	if ds.post.Dtype != trace.Int32 || ds.post.Count != 2 || ds.post.Bytes != 8 || ds.post.HashPost != want || dr.done.HashDone != want {
		t.Errorf("vector send %+v, recv hash %#x, want hash %#x", ds.post, dr.done.HashDone, want)
	}
	// Sendrecv_replace.
	if sr := find(0, trace.OpSendrecv, 15); sr.post.Peer != 1 || sr.done.MatchRank != 1 {
		t.Errorf("Sendrecv_replace %+v / %+v", sr.post, sr.done)
	}
	// Testany: Tests of the one active request, the last one said done.
	var tests []op
	for _, o := range rk[0] {
		if o.post.Op == trace.OpTest {
			tests = append(tests, o)
		}
	}
	for i, o := range tests {
		if o.done.Flag != (i == len(tests)-1) || len(o.post.Reqs) != 1 {
			t.Errorf("Testany %d of %d: flag %v reqs %v", i, len(tests), o.done.Flag, o.post.Reqs)
		}
	}
	// Request_free of an active request.
	last := rk[0][len(rk[0])-3]
	if fr := rk[0][len(rk[0])-2]; fr.post.Op != trace.OpFree || len(fr.post.Reqs) != 1 || fr.post.Reqs[0] != last.post.Req {
		t.Errorf("Free %+v of %+v", fr.post, last.post)
	}
	// Waitany over [null, irecv]: index 0 of the recorded Reqs.
	wa := rk[1][len(rk[1])-3]
	if len(wa.post.Reqs) != 1 || wa.done.Index != 0 {
		t.Errorf("Waitany %+v / %+v", wa.post, wa.done)
	}
}

const waitanyC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, v[2], idx, k;
    MPI_Request r[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Irecv(&v[0], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(&v[1], 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &r[1]);
        for (k = 0; k < 2; k++) MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
    } else {
        MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
`

// TestMergeWaitany: each Waitany lists its candidates (the null handle left
// by the first one is left out of the second) and, as Index, the one the
// program got, which the replay then waits for.
func TestMergeWaitany(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "waitany", waitanyC)
	segdir := runMPI(t, 3, bin, false)
	out := filepath.Join(dir, "waitany.p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, rk, _ := loadTrace(t, out)
	if got := ops(rk[0]); got != "Irecv Irecv Waitany Waitany Finalize" {
		t.Fatalf("ops %q", got)
	}
	w1, w2 := rk[0][2], rk[0][3]
	irecvs := []uint64{rk[0][0].post.Req, rk[0][1].post.Req}
	if !slices.Equal(w1.post.Reqs, irecvs) || len(w2.post.Reqs) != 1 {
		t.Fatalf("candidates %v then %v; want both Irecvs %v, then the one left", w1.post.Reqs, w2.post.Reqs, irecvs)
	}
	if w1.done.Index < 0 || w1.done.Index > 1 || w2.done.Index != 0 {
		t.Fatalf("indexes %d, %d", w1.done.Index, w2.done.Index)
	}
	if got1, got2 := w1.post.Reqs[w1.done.Index], w2.post.Reqs[0]; got1 == got2 || !slices.Contains(irecvs, got2) {
		t.Errorf("the Waitanys got requests %d and %d; want each Irecv once", got1, got2)
	}
}
