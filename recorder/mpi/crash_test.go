package mpi

import (
	"bytes"
	"context"
	"github.com/p2ptrace/p2ptrace/verdict"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

const killedC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, v = 0, i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (i = 1; i <= 3; i++) {
        if (rank == 0) MPI_Send(&i, 1, MPI_INT, 1, i, MPI_COMM_WORLD);
        else MPI_Recv(&v, 1, MPI_INT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Recv(&v, 1, MPI_INT, 1 - rank, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE:hang */
    MPI_Finalize();
    return 0;
}
`

// TestKilledRankKeepsRecords SIGKILLs rank 1 while it is blocked: its
// segment keeps every call, and the merged trace ends rank 1 in the
// receive, posted without completion.
func TestKilledRankKeepsRecords(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "killed", killedC)
	segdir := filepath.Join(dir, "seg")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := mpirunCmd(ctx, t, 2, segdir, nil, bin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	var pid int
	for deadline := time.Now().Add(30 * time.Second); ; {
		l0, err0 := ReadLiveState(SegmentPath(segdir, 0))
		l1, err1 := ReadLiveState(SegmentPath(segdir, 1))
		if err0 == nil && err1 == nil && l0.Blocked == "MPI_Recv" && l1.Blocked == "MPI_Recv" && l1.Calls >= 5 {
			pid = l1.PID
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not both blocked: %+v %v / %+v %v", l0, err0, l1, err1)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("mpirun exited 0 after a rank was killed\n%s", out.String())
	}
	trc := filepath.Join(dir, "killed.p2ptrace")
	res, err := Merge(segdir, trc, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fs := res.Header.Findings; res.Header.Status != trace.StatusCrashed || len(fs) != 1 || fs[0].Kind != verdict.Crash || !strings.Contains(fs[0].Message, "without MPI_Finalize") {
		t.Errorf("status %q findings %+v", res.Header.Status, res.Header.Findings)
	}
	r1 := res.Ranks[1]
	if r1.State != StateBlocked || r1.Blocked != "MPI_Recv" || !strings.HasSuffix(r1.Site, "killed.c:"+itoa(siteLine(t, killedC, "SITE:hang"))) {
		t.Errorf("rank 1 end %+v", r1)
	}
	_, rk, _ := loadTrace(t, trc)
	for r := range 2 {
		want := map[int]string{0: "Send Send Send Recv", 1: "Recv Recv Recv Recv"}[r]
		if got := ops(rk[r]); got != want {
			t.Errorf("rank %d ops %q, want %q", r, got, want)
		}
		last := rk[r][len(rk[r])-1]
		if last.hasDone || last.post.Tag != 9 {
			t.Errorf("rank %d: last op %+v done %v, want the tag 9 receive without done", r, last.post, last.hasDone)
		}
		for _, o := range rk[r][:3] {
			if !o.hasDone || o.done.MatchRank != int32(1-r) {
				t.Errorf("rank %d: %+v / %+v", r, o.post, o.done)
			}
		}
	}
	// The caller (the monitor) knows the job hung: it says so.
	res, err = Merge(segdir, trc, MergeOptions{Force: true, Status: trace.StatusHung, Message: "ranks 0 and 1 blocked in MPI_Recv"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Status != trace.StatusHung || !strings.HasPrefix(res.Header.Message, "ranks 0 and 1 blocked") {
		t.Errorf("hung: %+v", res.Header)
	}
}

const mpiErrorC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, v = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) MPI_Send(&v, 1, MPI_INT, 5, 0, MPI_COMM_WORLD); /* SITE:bad */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
`

func TestMPIErrorRecorded(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "mpierr", mpiErrorC)
	segdir := runMPI(t, 2, bin, true)
	res, err := Merge(segdir, filepath.Join(dir, "mpierr.p2ptrace"), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r1 := res.Ranks[1]
	line := itoa(siteLine(t, mpiErrorC, "SITE:bad"))
	if r1.State != StateErrored || !strings.Contains(r1.Error, "invalid rank") || !strings.HasSuffix(r1.Site, "mpierr.c:"+line) {
		t.Errorf("rank 1 end %+v", r1)
	}
	fs := res.Header.Findings
	if res.Header.Status != trace.StatusCrashed || len(fs) != 1 || fs[0].Kind != verdict.InvalidCall || !slices.Equal(fs[0].Ranks, []int{1}) ||
		!strings.HasPrefix(fs[0].Message, "rank 1: MPI error in MPI_Send: MPI_ERR_RANK: invalid rank") || len(fs[0].Ops) != 1 || !strings.HasSuffix(fs[0].Ops[0].Site, "mpierr.c:"+line) {
		t.Errorf("status %q findings %+v", res.Header.Status, fs)
	}
	// MPI refused the Send for its rank (MPI_ERR_RANK, an argument's error
	// class): it took no effect, so it is not in the trace, where a replay
	// would report it again, and what would follow from it.
	if !segHeaderRejected(t, segdir, 1) {
		t.Errorf("rank 1's segment does not say its failed call was refused")
	}
	_, rk, _ := loadTrace(t, filepath.Join(dir, "mpierr.p2ptrace"))
	if got := ops(rk[1]); got != "" {
		t.Errorf("rank 1's ops %q, want none: the refused Send left out", got)
	}
}

// segHeaderRejected reads rank r's segment header in segdir and says
// whether it marks its failed call as refused for an argument.
func segHeaderRejected(t *testing.T, segdir string, r int) bool {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(segdir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range segs {
		b, err := os.ReadFile(p)
		if err != nil || len(b) < segHdrSize {
			continue
		}
		h, err := parseHeader(b[:segHdrSize])
		if err == nil && int(h.Rank) == r {
			return h.ErrRejected
		}
	}
	t.Fatalf("no segment of rank %d in %s", r, segdir)
	return false
}
