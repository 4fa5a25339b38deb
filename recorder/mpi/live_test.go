package mpi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

const blockedRecvC = `#include <mpi.h>
int main(int argc, char **argv) {
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* both ranks wait for a message nobody sends */
    MPI_Recv(&x, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
`

// TestLiveStateBlocked polls the live headers of a job where both ranks block
// in MPI_Recv, then kills the job; the segments keep the posted receives.
func TestLiveStateBlocked(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "blocked", blockedRecvC)
	segdir := filepath.Join(dir, "seg")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := mpirunCmd(ctx, t, 2, segdir, nil, bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	if _, err := ReadLiveState(SegmentPath(segdir, 0)); err == nil {
		// The job may be fast; that is fine. Only a non-ErrNotExist error before creation is wrong.
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("before the rank created its segment: %v, want os.ErrNotExist", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var states [2]LiveState
	for {
		blocked := 0
		for r := range 2 {
			ls, err := ReadLiveState(SegmentPath(segdir, r))
			if err != nil {
				if !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("rank %d: %v", r, err)
				}
				continue
			}
			states[r] = ls
			if ls.State == StateBlocked {
				blocked++
			}
		}
		if blocked == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ranks not blocked after 30s: %+v", states)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for r, ls := range states {
		if ls.Rank != r || ls.Size != 2 || ls.PID <= 0 || ls.Blocked != "MPI_Recv" || ls.Calls < 2 {
			t.Errorf("rank %d: live state %+v, want rank %d of 2 blocked in MPI_Recv", r, ls, r)
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	for r := range 2 {
		s, err := readSegment(SegmentPath(segdir, r))
		if err != nil {
			t.Fatal(err)
		}
		var posts int
		for _, rec := range s.recs {
			if rec.Type == recPost {
				posts++
				if rec.Call != callRecv || rec.Peer != int32(1-r) || rec.Tag != 7 {
					t.Errorf("rank %d: post %+v, want MPI_Recv from %d tag 7", r, rec, 1-r)
				}
			}
		}
		if posts != 1 {
			t.Errorf("rank %d: %d posts, want 1", r, posts)
		}
	}
}
