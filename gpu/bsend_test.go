package gpu_test

import (
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// bsendPair runs rank 0: attach (if attach >= 0), two Bsends of 16 bytes
// to rank 1, detach; rank 1 receives both after a barrier rank 0 enters
// after its second Bsend (late, if lateRecv) or before the first (the
// first is transmitted before the second is sent).
func bsendPair(t *testing.T, attach int64, lateRecv bool) error {
	t.Helper()
	return gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 4)
		if r.ID() == 1 {
			if lateRecv {
				if err := r.Barrier(); err != nil {
					return err
				}
			}
			if _, err := r.Recv(b, 0, 0); err != nil {
				return err
			}
			if !lateRecv {
				if err := r.Barrier(); err != nil {
					return err
				}
			}
			_, err := r.Recv(b, 0, 1)
			return err
		}
		if attach >= 0 {
			if err := r.BufferAttach(attach); err != nil {
				return err
			}
		}
		if err := r.Bsend(b, 1, 0); err != nil {
			return err
		}
		if !lateRecv {
			if err := r.Barrier(); err != nil {
				return err
			}
		}
		if err := r.Bsend(b, 1, 1); err != nil {
			return err
		}
		if lateRecv {
			if err := r.Barrier(); err != nil {
				return err
			}
		}
		if attach >= 0 {
			n, err := r.BufferDetach()
			if err == nil && n != attach {
				t.Errorf("BufferDetach handed back %d bytes, want %d", n, attach)
			}
			return err
		}
		return nil
	})
}

// TestBufferAttachBsend: the Go door's attached space (gpu/sim/bsend.go):
// two 16-byte messages in flight fit in 32 bytes (no overhead), not in
// 31; in 16 they fit when the first was received before the second is
// sent; a rank that never attaches is not checked (Bsend as before).
func TestBufferAttachBsend(t *testing.T) {
	for _, c := range []struct {
		name   string
		attach int64
		late   bool
		want   int
	}{
		{"fits", 32, true, 0},
		{"overflow", 31, true, 1},
		{"freed-at-transmission", 16, false, 0},
		{"never-attached", -1, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := findingsOfKind(t, verdict.BsendBuffer, bsendPair(t, c.attach, c.late))
			if len(fs) != c.want {
				t.Fatalf("%d bsend-buffer findings %+v, want %d", len(fs), fs, c.want)
			}
			if c.want == 1 && (!strings.Contains(fs[0].Message, "15 of the 31 bytes") || fs[0].Ops[0].Tag != 1) {
				t.Errorf("finding %+v: want the tag-1 Bsend with 15 of 31 bytes free", fs[0])
			}
		})
	}
}

// TestBufferDetachBlocks: a detach waits for the buffered message to be
// received (rank 1 receives it after a long compute; the detach returns
// after that), and a detach whose message nobody receives hangs.
func TestBufferDetachBlocks(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 4)
		if r.ID() == 1 {
			if err := r.Compute(time.Millisecond); err != nil {
				return err
			}
			_, err := r.Recv(b, 0, 0)
			return err
		}
		if err := r.BufferAttach(64); err != nil {
			return err
		}
		if err := r.Bsend(b, 1, 0); err != nil {
			return err
		}
		if _, err := r.BufferDetach(); err != nil {
			return err
		}
		if now := r.Now(); now < time.Millisecond {
			t.Errorf("detach returned at %d, before the receive at 1ms", now)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fs := findingsOfKind(t, verdict.Hang, gpu.Launch(2, func(r *gpu.Rank) error {
		if r.ID() == 1 {
			return nil
		}
		if err := r.BufferAttach(64); err != nil {
			return err
		}
		if err := r.Bsend(r.Alloc(gpu.Int32, 4), 1, 0); err != nil {
			return err
		}
		_, err := r.BufferDetach()
		return err
	}))
	if len(fs) != 1 || len(fs[0].Blocked) != 1 || fs[0].Blocked[0].Call.Op != "Buffer_detach" {
		t.Fatalf("findings %+v: want a hang of rank 0 in Buffer_detach", fs)
	}
}

// TestBufferAttachTwice: a second attach before the detach is an invalid
// call.
func TestBufferAttachTwice(t *testing.T) {
	fs := findingsOfKind(t, verdict.InvalidCall, gpu.Launch(1, func(r *gpu.Rank) error {
		if err := r.BufferAttach(64); err != nil {
			return err
		}
		_ = r.BufferAttach(64) // the finding is the point
		_, err := r.BufferDetach()
		return err
	}))
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "still attached") {
		t.Fatalf("findings %+v: want one invalid call", fs)
	}
}
