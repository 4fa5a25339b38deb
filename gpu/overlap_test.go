package gpu_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// overlaps runs fn live, not recorded (the rule needs no recording), and
// returns the buffer-overlap findings.
func overlaps(t *testing.T, ranks int, fn func(*gpu.Rank) error) []verdict.Finding {
	t.Helper()
	return findingsOfKind(t, verdict.BufferOverlap, gpu.Launch(ranks, fn))
}

// TestPendingBuffersOverlapIsFound: two pending operations of one rank
// whose buffers share bytes, one of them a receive, are a buffer-overlap
// naming both calls (an Irecv and an Isend from part of its buffer; two
// Irecvs into one buffer; a blocking Recv into the buffer of a pending
// Isend), and so is a Sendrecv whose two buffers overlap. The fixed
// programs (disjoint slices of one allocation, two Isends from one buffer:
// both only read, the same buffer reused after the Wait, Sendrecv with
// disjoint buffers) are clean.
func TestPendingBuffersOverlapIsFound(t *testing.T) {
	exchange := func(mode string, bug bool) func(*gpu.Rank) error {
		return func(r *gpu.Rank) error {
			peer := 1 - r.ID()
			b := r.Alloc(gpu.Int32, 8)
			lo, hi := b.Slice(0, 4), b.Slice(2, 4) // overlapping
			if !bug {
				hi = b.Slice(4, 4)
			}
			switch mode {
			case "irecv-isend":
				q1, err := r.Irecv(lo, peer, 0) // culprit: ov-irecv
				if err != nil {
					return err
				}
				q2, err := r.Isend(hi, peer, 0) // culprit: ov-isend
				if err != nil {
					return err
				}
				return r.Waitall(q1, q2)
			case "irecv-irecv":
				var q2 *gpu.Request
				q1, err := r.Irecv(lo, peer, 0) // culprit: ov-irecv1
				if err != nil {
					return err
				}
				if !bug {
					if _, err := r.Wait(q1); err != nil { // retired: the buffer is the program's again
						return err
					}
					q1 = nil
				}
				if q2, err = r.Irecv(lo, peer, 1); err != nil { // culprit: ov-irecv2
					return err
				}
				out := r.Alloc(gpu.Int32, 4)
				if err := r.Send(out, peer, 0); err != nil {
					return err
				}
				if err := r.Send(out, peer, 1); err != nil {
					return err
				}
				return r.Waitall(q1, q2)
			case "isend-recv":
				q, err := r.Isend(lo, peer, 0) // culprit: ov-isend2
				if err != nil {
					return err
				}
				if bug {
					if _, err := r.Recv(hi, peer, 0); err != nil { // culprit: ov-recv
						return err
					}
				} else {
					q2, err := r.Isend(lo, peer, 0) // two sends from one buffer only read it
					if err != nil {
						return err
					}
					if _, err := r.Recv(hi, peer, 0); err != nil {
						return err
					}
					if _, err := r.Recv(hi, peer, 0); err != nil {
						return err
					}
					return r.Waitall(q, q2)
				}
				_, err = r.Wait(q)
				return err
			default: // sendrecv
				_, err := r.Sendrecv(lo, peer, 0, hi, peer, 0) // culprit: ov-sendrecv
				return err
			}
		}
	}
	for _, c := range []struct{ mode, a, b string }{
		{"irecv-isend", "ov-irecv", "ov-isend"},
		{"irecv-irecv", "ov-irecv1", "ov-irecv2"},
		{"isend-recv", "ov-isend2", "ov-recv"},
		{"sendrecv", "ov-sendrecv", "ov-sendrecv"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			a, b := ovHere(t, c.a), ovHere(t, c.b)
			fs := overlaps(t, 2, exchange(c.mode, true))
			if len(fs) != 2 {
				t.Fatalf("findings %+v, want a buffer-overlap on each rank", fs)
			}
			for i, f := range fs {
				if !slices.Equal(f.Ranks, []int{i}) || len(f.Ops) != 2 || f.Ops[0].Site != a || f.Ops[1].Site != b {
					t.Errorf("finding %+v, want rank %d's ops at %s and %s", f, i, a, b)
				}
			}
			if fs := overlaps(t, 2, exchange(c.mode, false)); len(fs) != 0 {
				t.Fatalf("the fixed program: %+v", fs)
			}
		})
	}
}

func ovHere(t *testing.T, marker string) string {
	t.Helper()
	return fmt.Sprintf("overlap_test.go:%d", markerLine(t, "overlap_test.go", marker))
}
