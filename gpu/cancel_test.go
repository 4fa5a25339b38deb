package gpu_test

import (
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// TestRequestCancel: Request.Cancel takes a receive nobody sends to and a
// send nobody receives (Wait returns, Status.Cancelled), and fails on a
// receive a message matched (the data arrives). A clean run: neither the
// cancelled receive's Wait (no deadlock) nor the withdrawn message (no
// unmatched send) is a finding.
func TestRequestCancel(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 4)
		if r.ID() == 1 {
			if err := r.Ssend(b, 0, 5); err != nil {
				return err
			}
			return r.Barrier()
		}
		matched, err := r.Irecv(b, 1, 5)
		if err != nil {
			return err
		}
		unmatched, err := r.Irecv(r.Alloc(gpu.Int32, 4), 1, 99)
		if err != nil {
			return err
		}
		send, err := r.Isend(r.Alloc(gpu.Int32, 4), 1, 6)
		if err != nil {
			return err
		}
		if err := r.Barrier(); err != nil {
			return err
		}
		for _, q := range []*gpu.Request{matched, unmatched, send} {
			if err := q.Cancel(); err != nil {
				return err
			}
		}
		for i, want := range []bool{false, true, true} {
			st, err := r.Wait([]*gpu.Request{matched, unmatched, send}[i])
			if err != nil {
				return err
			}
			if st.Cancelled != want {
				t.Errorf("request %d: cancelled %v, want %v", i, st.Cancelled, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRequestCancelledNeverWaited: a cancel does not retire the request.
func TestRequestCancelledNeverWaited(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		if r.ID() == 1 {
			return nil
		}
		q, err := r.Irecv(r.Alloc(gpu.Int32, 4), 1, 99)
		if err != nil {
			return err
		}
		return q.Cancel()
	})
	wantKinds(t, err, verdict.MissingWait)
}
