package gpu_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// recvWrites runs fn recorded (payloads hashed) and returns the
// recv-buffer-write findings.
func recvWrites(t *testing.T, ranks int, fn func(*gpu.Rank) error) []verdict.Finding {
	t.Helper()
	return findingsOfKind(t, verdict.RecvBufferWrite, gpu.Launch(ranks, fn, gpu.RecordTo(discard{})))
}

// TestRecvBufferWrittenWhilePendingIsFound: writing an Irecv's buffer
// before its Wait is a recv-buffer-write at the Irecv and the call that
// noticed it, whether the message had landed or not; the same program that
// writes after the Wait, or writes another buffer, is clean.
func TestRecvBufferWrittenWhilePendingIsFound(t *testing.T) {
	prog := func(writeBeforeWait, late bool) func(*gpu.Rank) error {
		return func(r *gpu.Rank) error {
			b := r.Alloc(gpu.Int32, 4)
			if r.ID() == 1 {
				if late {
					if err := r.Compute(1000); err != nil {
						return err
					}
				}
				return r.Send(b, 0, 0)
			}
			q, err := r.Irecv(b, 1, 0) // culprit: rw-irecv
			if err != nil {
				return err
			}
			if !late {
				if err := r.Compute(1000); err != nil { // the message lands meanwhile
					return err
				}
			}
			if writeBeforeWait {
				b.Int32s()[0] = 7
			}
			if _, err := r.Wait(q); err != nil { // culprit: rw-wait
				return err
			}
			b.Int32s()[1] = 7 // after the Wait: the program's to write
			return nil
		}
	}
	irecv, wait := rwHere(t, "rw-irecv"), rwHere(t, "rw-wait")
	for _, late := range []bool{false, true} {
		t.Run(fmt.Sprint("late=", late), func(t *testing.T) {
			fs := recvWrites(t, 2, prog(true, late))
			if len(fs) != 1 || !slices.Equal(fs[0].Ranks, []int{0}) || len(fs[0].Ops) != 2 || fs[0].Ops[0].Site != irecv || fs[0].Ops[1].Site != wait {
				t.Fatalf("findings %+v, want one recv-buffer-write of rank 0 at %s, noticed at %s", fs, irecv, wait)
			}
			if fs := recvWrites(t, 2, prog(false, late)); len(fs) != 0 {
				t.Fatalf("the fixed program: %+v", fs)
			}
		})
	}
}

// TestStreamRecvBufferWrittenBeforeSynchronize: the stream form.
func TestStreamRecvBufferWrittenBeforeSynchronize(t *testing.T) {
	prog := func(write bool) func(*gpu.Rank) error {
		return func(r *gpu.Rank) error {
			b := r.Alloc(gpu.Float32, 8)
			s := r.Stream()
			if r.ID() == 0 {
				if err := s.Send(b, 1); err != nil {
					return err
				}
			} else {
				if err := s.Recv(b, 0); err != nil { // culprit: rw-srecv
					return err
				}
				if write {
					b.Float32s()[0] = 1
				}
			}
			return s.Synchronize()
		}
	}
	fs := recvWrites(t, 2, prog(true))
	if len(fs) != 1 || fs[0].Ops[0].Site != rwHere(t, "rw-srecv") {
		t.Fatalf("findings %+v, want the stream recv's buffer written before Synchronize", fs)
	}
	if fs := recvWrites(t, 2, prog(false)); len(fs) != 0 {
		t.Fatalf("the fixed program: %+v", fs)
	}
}

func rwHere(t *testing.T, marker string) string {
	t.Helper()
	return fmt.Sprintf("recvwrite_test.go:%d", markerLine(t, "recvwrite_test.go", marker))
}

// TestRecvLandedMessageIsNotAWrite: a message that lands in a pending
// Irecv's buffer (whole or in part, eager or rendezvous, already there at
// the Irecv or later, the send's hash reused or the buffer hashed) is the
// runtime's write, not the program's; a program write after it still is
// one.
func TestRecvLandedMessageIsNotAWrite(t *testing.T) {
	prog := func(recvLen int, early bool, wait time.Duration, write bool) func(*gpu.Rank) error {
		return func(r *gpu.Rank) error {
			if r.ID() == 1 {
				b := r.Alloc(gpu.Int32, 4)
				copy(b.Int32s(), []int32{1, 2, 3, 4})
				return r.Send(b, 0, 0)
			}
			b := r.Alloc(gpu.Int32, recvLen)
			b.Int32s()[0] = 9 // what the message overwrites
			// The message lands (a link latency after the send) before the
			// Irecv (early) or after it: before the Wait, or (wait shorter
			// than the latency) matched and copied in, not landed yet.
			if early {
				if err := r.Compute(time.Millisecond); err != nil {
					return err
				}
			}
			q, err := r.Irecv(b, 1, 0)
			if err != nil {
				return err
			}
			if !early {
				if err := r.Compute(wait); err != nil {
					return err
				}
			}
			if write {
				b.Int32s()[1] = 7
			}
			_, err = r.Wait(q)
			return err
		}
	}
	for _, recvLen := range []int{4, 6} {
		for _, eager := range []int{64, 0} {
			for _, c := range []struct {
				early bool
				wait  time.Duration
			}{{false, time.Millisecond}, {false, time.Microsecond}, {true, 0}} {
				early, wait := c.early, c.wait
				if early && eager == 0 {
					continue // a rendezvous message waits for its receive
				}
				t.Run(fmt.Sprintf("len=%d,eager=%d,early=%v,wait=%v", recvLen, eager, early, wait), func(t *testing.T) {
					run := func(write bool) []verdict.Finding {
						var out []verdict.Finding
						err := gpu.Launch(2, prog(recvLen, early, wait, write), gpu.RecordTo(discard{}), gpu.EagerLimit(int64(eager)))
						var re *gpu.RunError
						if err != nil && !errors.As(err, &re) {
							t.Fatal(err)
						}
						if re != nil {
							for _, f := range re.Findings {
								if f.Kind == verdict.RecvBufferWrite {
									out = append(out, f)
								}
							}
						}
						return out
					}
					if fs := run(false); len(fs) != 0 {
						t.Errorf("no write: %+v", fs)
					}
					if fs := run(true); len(fs) != 1 {
						t.Errorf("a write after the message landed: %+v, want one recv-buffer-write", fs)
					}
				})
			}
		}
	}
}
