package gpu_test

import (
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/p2ptrace/p2ptrace/gpu"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const large = 1 << 20 // floats: 4 MiB, above the default eager limit

func fill(b *gpu.Buffer, v float32) {
	for i := range b.Float32s() {
		b.Float32s()[i] = v
	}
}

func problemKinds(err error) []verdict.Kind {
	var re *gpu.RunError
	if !errors.As(err, &re) {
		return nil
	}
	var kinds []verdict.Kind
	for _, p := range re.Problems {
		kinds = append(kinds, p.Kind)
	}
	return kinds
}

func wantKinds(t *testing.T, err error, want ...verdict.Kind) {
	t.Helper()
	got := problemKinds(err)
	if len(got) != len(want) {
		t.Fatalf("problems %v, want %v (err: %v)", got, want, err)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("problems %v, want %v (err: %v)", got, want, err)
		}
	}
}

func TestNonOvertaking(t *testing.T) {
	// Two messages from one sender that both match the same wildcard receive
	// arrive in the order sent, whatever their sizes and the seed.
	for seed := range uint64(20) {
		err := gpu.Launch(2, func(r *gpu.Rank) error {
			big, small := r.Alloc(gpu.Float32, large), r.Alloc(gpu.Float32, 4)
			if r.ID() == 0 {
				fill(big, 1)
				fill(small, 2)
				q1, _ := r.Isend(big, 1, 7)
				q2, _ := r.Isend(small, 1, 7)
				return r.Waitall(q1, q2)
			}
			a, b := r.Alloc(gpu.Float32, large), r.Alloc(gpu.Float32, large)
			st1, err := r.Recv(a, gpu.AnySource, gpu.AnyTag)
			if err != nil {
				return err
			}
			st2, err := r.Recv(b, 0, 7)
			if err != nil {
				return err
			}
			if st1.Count != large || st2.Count != 4 || a.Float32s()[0] != 1 || b.Float32s()[0] != 2 {
				t.Errorf("seed %d: overtaken: first %+v, second %+v", seed, st1, st2)
			}
			return nil
		}, gpu.Seed(seed))
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestReceivesMatchInPostOrder(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		if r.ID() == 0 {
			a, b := r.Alloc(gpu.Int32, 1), r.Alloc(gpu.Int32, 1)
			a.Int32s()[0], b.Int32s()[0] = 10, 20
			if err := r.Compute(time.Millisecond); err != nil { // both receives are posted first
				return err
			}
			if err := r.Send(a, 1, 5); err != nil {
				return err
			}
			return r.Send(b, 1, 5)
		}
		x, y := r.Alloc(gpu.Int32, 1), r.Alloc(gpu.Int32, 1)
		qx, _ := r.Irecv(x, gpu.AnySource, 5)
		qy, _ := r.Irecv(y, 0, gpu.AnyTag)
		if err := r.Waitall(qx, qy); err != nil {
			return err
		}
		if x.Int32s()[0] != 10 || y.Int32s()[0] != 20 {
			t.Errorf("receives matched out of post order: %d %d", x.Int32s()[0], y.Int32s()[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWildcardMatching(t *testing.T) {
	err := gpu.Launch(3, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 1)
		switch r.ID() {
		case 1:
			b.Int32s()[0] = 1
			return r.Send(b, 0, 11)
		case 2:
			if err := r.Compute(time.Millisecond); err != nil { // arrives second
				return err
			}
			b.Int32s()[0] = 2
			return r.Send(b, 0, 22)
		}
		st, err := r.Recv(b, gpu.AnySource, gpu.AnyTag)
		if err != nil {
			return err
		}
		if st.Source != 1 || st.Tag != 11 || st.Count != 1 {
			t.Errorf("AnySource took %+v, want the first arrival from rank 1 tag 11", st)
		}
		st, err = r.Recv(b, 2, gpu.AnyTag)
		if err != nil {
			return err
		}
		if st.Source != 2 || st.Tag != 22 {
			t.Errorf("second recv %+v", st)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAnySourceTieIsSeeded(t *testing.T) {
	// Two sends arriving at the same virtual time: the seed decides, the
	// same seed always decides the same, and some seeds decide each way.
	first := func(seed uint64) int {
		var src int
		err := gpu.Launch(3, func(r *gpu.Rank) error {
			b := r.Alloc(gpu.Int32, 1)
			if r.ID() != 0 {
				return r.Send(b, 0, 0)
			}
			st, err := r.Recv(b, gpu.AnySource, 0)
			src = st.Source
			if err != nil {
				return err
			}
			_, err = r.Recv(b, gpu.AnySource, 0)
			return err
		}, gpu.Seed(seed))
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	seen := map[int]bool{}
	for seed := range uint64(40) {
		a, b := first(seed), first(seed)
		if a != b {
			t.Fatalf("seed %d: %d then %d", seed, a, b)
		}
		seen[a] = true
	}
	if !seen[1] || !seen[2] {
		t.Fatalf("40 seeds always picked the same sender: %v", seen)
	}
}

func TestEagerVsRendezvous(t *testing.T) {
	// Head-to-head blocking sends complete below the eager limit and deadlock above it.
	run := func(count int, opts ...gpu.Option) error {
		return gpu.Launch(2, func(r *gpu.Rank) error {
			b := r.Alloc(gpu.Float32, count)
			if err := r.Send(b, 1-r.ID(), 0); err != nil {
				return err
			}
			_, err := r.Recv(b, 1-r.ID(), 0)
			return err
		}, opts...)
	}
	if err := run(16); err != nil {
		t.Fatalf("small head-to-head: %v", err)
	}
	err := run(large)
	if !errors.Is(err, gpu.ErrStuck) {
		t.Fatalf("large head-to-head: %v, want ErrStuck", err)
	}
	wantKinds(t, err, verdict.Deadlock)
	if err := run(1024, gpu.EagerLimit(8<<10)); err != nil {
		t.Fatalf("4 KiB under an 8 KiB eager limit: %v", err)
	}
	if err := run(4096, gpu.EagerLimit(8<<10)); !errors.Is(err, gpu.ErrStuck) {
		t.Fatalf("16 KiB over an 8 KiB eager limit: %v", err)
	}
}

func TestSynchronousMode(t *testing.T) {
	// Ssend completes only once the matching receive started, even when small.
	var sendDone, recvPosted time.Duration
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		if r.ID() == 0 {
			err := r.Ssend(b, 1, 0)
			sendDone = r.Now()
			return err
		}
		if err := r.Compute(5 * time.Millisecond); err != nil {
			return err
		}
		recvPosted = r.Now()
		_, err := r.Recv(b, 0, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if sendDone < recvPosted {
		t.Fatalf("Ssend returned at %v, before the receive was posted at %v", sendDone, recvPosted)
	}
	// Head-to-head Ssends deadlock at any size.
	err = gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 1)
		if err := r.Ssend(b, 1-r.ID(), 0); err != nil {
			return err
		}
		_, err := r.Recv(b, 1-r.ID(), 0)
		return err
	})
	wantKinds(t, err, verdict.Deadlock)
}

func TestBufferedModeCompletesLocally(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, large)
		if err := r.Bsend(b, 1-r.ID(), 0); err != nil {
			return err
		}
		_, err := r.Recv(b, 1-r.ID(), 0)
		return err
	})
	if err != nil {
		t.Fatalf("head-to-head Bsend of 4 MiB: %v", err)
	}
}

func TestReadySendWithoutReceive(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		if r.ID() == 0 {
			return r.Rsend(b, 1, 3)
		}
		if err := r.Compute(time.Millisecond); err != nil { // posts too late
			return err
		}
		_, err := r.Recv(b, 0, 3)
		return err
	})
	wantKinds(t, err, verdict.ReadyWithoutRecv)
	if !strings.Contains(err.Error(), "rank 0: ready send (Rsend) to rank 1 tag 3, but rank 1 had not posted a matching receive") {
		t.Fatalf("message: %v", err)
	}
	// With the receive posted first, Rsend is correct.
	err = gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		if r.ID() == 0 {
			if err := r.Compute(time.Millisecond); err != nil {
				return err
			}
			return r.Rsend(b, 1, 3)
		}
		_, err := r.Recv(b, 0, 3)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTruncation(t *testing.T) {
	var callErr error
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		if r.ID() == 0 {
			return r.Send(r.Alloc(gpu.Float32, 8), 1, 0)
		}
		_, callErr = r.Recv(r.Alloc(gpu.Float32, 4), 0, 0)
		return nil
	})
	if !errors.Is(callErr, gpu.ErrTruncated) {
		t.Fatalf("Recv error %v, want ErrTruncated", callErr)
	}
	wantKinds(t, err, verdict.Truncation)
	if !strings.Contains(err.Error(), "[1] truncation (cause: program)\n    rank 0 sent 32 bytes, rank 1's receive buffer holds 16") {
		t.Fatalf("message: %v", err)
	}
}

func TestDatatypeMismatch(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		if r.ID() == 0 {
			return r.Send(r.Alloc(gpu.Float32, 4), 1, 0)
		}
		_, err := r.Recv(r.Alloc(gpu.Int32, 4), 0, 0)
		return err
	})
	wantKinds(t, err, verdict.TypeMismatch)
	if !strings.Contains(err.Error(), "rank 0 sent 4 float32, rank 1 receives int32") {
		t.Fatalf("message: %v", err)
	}
}

// TestRequestFreeWhileActive: MPI-3.1 sec. 3.7.3. Rank 0 frees its large
// Isend's request while the transfer is active and learns of the send's
// completion from rank 1's reply: legitimate, no finding, and rank 1 gets
// the data. Freeing an active Irecv is still a missing Wait (nothing tells
// when its buffer holds the message).
func TestRequestFreeWhileActive(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b, ack := r.Alloc(gpu.Float32, large), r.Alloc(gpu.Int32, 1)
		if r.ID() == 0 {
			for i := range b.Float32s() {
				b.Float32s()[i] = float32(i)
			}
			q, err := r.Isend(b, 1, 0)
			if err != nil {
				return err
			}
			if err := q.Free(); err != nil {
				return err
			}
			_, err = r.Recv(ack, 1, 1)
			return err
		}
		if _, err := r.Recv(b, 0, 0); err != nil {
			return err
		}
		if v := b.Float32s()[large-1]; v != large-1 {
			return fmt.Errorf("rank 1 got %v at the end, want %v", v, large-1)
		}
		return r.Send(ack, 0, 1)
	})
	if err != nil {
		t.Fatalf("freed active send: %v", err)
	}
	err = gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, large)
		if r.ID() == 0 {
			q, err := r.Irecv(b, 1, 0)
			if err != nil {
				return err
			}
			return q.Free()
		}
		return r.Send(b, 0, 0)
	})
	wantKinds(t, err, verdict.MissingWait)
	if !strings.Contains(err.Error(), "rank 0: request of Irecv (peer 1, tag 0) freed while still active") {
		t.Fatalf("message: %v", err)
	}
}

func TestRequestNeverWaited(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		if r.ID() == 0 {
			_, err := r.Isend(b, 1, 0)
			return err
		}
		_, err := r.Irecv(b, 0, 0)
		return err
	})
	wantKinds(t, err, verdict.MissingWait, verdict.MissingWait)
	for _, want := range []string{"rank 0: request of Isend (peer 1, tag 0) completed but never waited", "rank 1: request of Irecv (peer 0, tag 0)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

func TestTestRetiresCompletedRequest(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		if r.ID() == 0 {
			return r.Send(b, 1, 0)
		}
		q, err := r.Irecv(b, 0, 0)
		if err != nil {
			return err
		}
		for {
			ok, st, err := r.Test(q)
			if err != nil || ok {
				if st.Source != 0 && err == nil {
					t.Errorf("status %+v", st)
				}
				return err
			}
			if err := r.Compute(time.Microsecond); err != nil {
				return err
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWaitanyReturnsFirstCompleted(t *testing.T) {
	err := gpu.Launch(3, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 1)
		switch r.ID() {
		case 1:
			if err := r.Compute(time.Millisecond); err != nil {
				return err
			}
			return r.Send(b, 0, 0)
		case 2:
			return r.Send(b, 0, 0)
		}
		b1, b2 := r.Alloc(gpu.Int32, 1), r.Alloc(gpu.Int32, 1)
		q1, _ := r.Irecv(b1, 1, 0)
		q2, _ := r.Irecv(b2, 2, 0)
		i, st, err := r.Waitany(q1, q2)
		if err != nil {
			return err
		}
		if i != 1 || st.Source != 2 {
			t.Errorf("Waitany = %d %+v, want 1 from rank 2", i, st)
		}
		j, _, err := r.Waitany(q1, q2)
		if j != 0 {
			t.Errorf("second Waitany = %d, want 0", j)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSendrecvPostsBothHalves(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		s, d := r.Alloc(gpu.Float32, large), r.Alloc(gpu.Float32, large)
		fill(s, float32(r.ID()+1))
		st, err := r.Sendrecv(s, 1-r.ID(), 0, d, 1-r.ID(), 0)
		if err != nil {
			return err
		}
		if st.Source != 1-r.ID() || d.Float32s()[large-1] != float32(2-r.ID()) {
			t.Errorf("rank %d got %+v %v", r.ID(), st, d.Float32s()[0])
		}
		return nil
	}, gpu.Faults(syncFaults{}))
	if err != nil {
		t.Fatal(err)
	}
}

func TestStreamBlocking(t *testing.T) {
	// A stream send or recv does not block the host, but the stream cannot
	// pass it until the peer's matching op runs: head-to-head hangs at any size.
	for _, count := range []int{1, large} {
		err := gpu.Launch(2, func(r *gpu.Rank) error {
			b, c := r.Alloc(gpu.Float32, count), r.Alloc(gpu.Float32, count)
			s := r.Stream()
			if err := s.Send(b, 1-r.ID()); err != nil {
				return err
			}
			if err := s.Recv(c, 1-r.ID()); err != nil {
				return err
			}
			return s.Synchronize()
		})
		if !errors.Is(err, gpu.ErrStuck) || !strings.Contains(err.Error(), "blocked in Stream.Synchronize") {
			t.Fatalf("%d floats: %v", count, err)
		}
		wantKinds(t, err, verdict.Deadlock)
	}
}

func TestStreamMatchesInOrderPerPair(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		s := r.Stream()
		a, b := r.Alloc(gpu.Int32, 1), r.Alloc(gpu.Int32, 1)
		if r.ID() == 0 {
			a.Int32s()[0], b.Int32s()[0] = 1, 2
			s.Send(a, 1)
			s.Send(b, 1)
			return s.Synchronize()
		}
		s.Recv(a, 0)
		s.Recv(b, 0)
		if err := s.Synchronize(); err != nil {
			return err
		}
		if a.Int32s()[0] != 1 || b.Int32s()[0] != 2 {
			t.Errorf("got %d %d", a.Int32s()[0], b.Int32s()[0])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGroupProgress(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b, c := r.Alloc(gpu.Float32, large), r.Alloc(gpu.Float32, large)
		fill(b, float32(r.ID()+1))
		s := r.Stream()
		r.GroupStart()
		s.Send(b, 1-r.ID())
		s.Recv(c, 1-r.ID())
		if err := r.GroupEnd(); err != nil {
			return err
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		if c.Float32s()[7] != float32(2-r.ID()) {
			t.Errorf("rank %d got %v", r.ID(), c.Float32s()[7])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStreamCountMismatch(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		s := r.Stream()
		if r.ID() == 0 {
			s.Send(r.Alloc(gpu.Float32, 1024), 1)
		} else {
			s.Recv(r.Alloc(gpu.Float32, 512), 0)
		}
		return s.Synchronize()
	})
	wantKinds(t, err, verdict.CountMismatch)
}

// A stream (NCCL) receive names its peer: NCCL has no receive from any
// source. One invalid-call, and the receive goes on as a wildcard (no
// follow-on finding of the same bug).
func TestStreamRecvFromAnySourceIsInvalid(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		s := r.Stream()
		if r.ID() == 0 {
			s.Send(r.Alloc(gpu.Float32, 4), 1)
		} else {
			s.Recv(r.Alloc(gpu.Float32, 4), gpu.AnySource) // culprit: any-source-recv
		}
		return s.Synchronize()
	})
	wantKinds(t, err, verdict.InvalidCall)
	if !strings.Contains(err.Error(), "a stream (NCCL) receive names its peer; NCCL has no receive from any source") || !strings.Contains(err.Error(), fmt.Sprintf("rank 1 op 0: Stream.Recv from any rank (16 bytes) at semantics_test.go:%d", markerLine(t, "semantics_test.go", "any-source-recv"))) {
		t.Errorf("%v", err)
	}
}

func TestStreamNotSynchronizedIsMissingWait(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		s := r.Stream()
		if r.ID() == 0 {
			return s.Send(r.Alloc(gpu.Float32, 4), 1)
		}
		return s.Recv(r.Alloc(gpu.Float32, 4), 0)
	})
	if !errors.Is(err, gpu.ErrProblem) || !strings.Contains(err.Error(), "Synchronize the stream") {
		t.Fatalf("%v", err)
	}
}

func TestUnmatchedSendAtFinalize(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		if r.ID() == 0 {
			return r.Send(r.Alloc(gpu.Float32, 4), 1, 9)
		}
		return nil
	})
	wantKinds(t, err, verdict.UnmatchedSend)
	if !strings.Contains(err.Error(), "rank 0: Send to rank 1 tag 9 (16 bytes) was never received") {
		t.Fatalf("%v", err)
	}
}

func TestStuckRunNamesRanksCallsAndLines(t *testing.T) {
	var callErrs [2]error
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		if r.ID() == 0 {
			_, callErrs[0] = r.Recv(b, 1, 1)
			return callErrs[0]
		}
		_, callErrs[1] = r.Recv(b, 0, 2)
		return callErrs[1]
	})
	if !errors.Is(err, gpu.ErrStuck) {
		t.Fatalf("%v", err)
	}
	for i, e := range callErrs {
		if !errors.Is(e, gpu.ErrStuck) {
			t.Errorf("rank %d's Recv returned %v, want ErrStuck", i, e)
		}
	}
	for _, want := range []string{
		"[1] deadlock (cause: program)\n    no rank can progress; wait-for cycle: rank 0 -> rank 1 -> rank 0",
		"rank 0 blocked in Recv from rank 1 tag 1 (16 bytes) at semantics_test.go:",
		"rank 1 blocked in Recv from rank 0 tag 2 (16 bytes) at semantics_test.go:",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

func TestHangOnFinishedRank(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		if r.ID() == 1 {
			_, err := r.Recv(r.Alloc(gpu.Float32, 4), 0, 0)
			return err
		}
		return nil
	})
	wantKinds(t, err, verdict.Hang)
	if !strings.Contains(err.Error(), "rank 1 waits on rank 0, which has finished") {
		t.Fatalf("%v", err)
	}
}

func TestCallsAfterStuckReturnErrStuck(t *testing.T) {
	var after error
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		_, err := r.Recv(b, 1-r.ID(), 0)
		if err != nil {
			after = r.Send(b, 1-r.ID(), 0) // ignores the error and goes on
		}
		return nil
	})
	if !errors.Is(err, gpu.ErrStuck) || !errors.Is(after, gpu.ErrStuck) {
		t.Fatalf("%v / %v", err, after)
	}
}

func TestPanicIsThatRanksError(t *testing.T) {
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		if r.ID() == 1 {
			var m map[string]int
			m["x"]++ // culprit: panic
		}
		return nil
	})
	var re *gpu.RunError
	if !errors.Is(err, gpu.ErrPanic) || !errors.As(err, &re) || !strings.Contains(err.Error(), "goroutine") {
		t.Fatalf("%v", err)
	}
	line := markerLine(t, "semantics_test.go", "panic")
	want := fmt.Sprintf("rank 1 crashed: panic: assignment to entry in nil map (at semantics_test.go:%d)", line)
	if len(re.Findings) != 1 || re.Findings[0].Kind != verdict.Crash || !slices.Equal(re.Findings[0].Ranks, []int{1}) || re.Findings[0].Message != want {
		t.Fatalf("findings %+v, want one crash of rank 1: %q", re.Findings, want)
	}
}

func TestWatchdogCatchesRankBlockedOutsideRuntime(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		if r.ID() == 0 {
			<-block // not a runtime call: the engine cannot see it
		}
		return nil
	}, gpu.WallTimeout(200*time.Millisecond))
	if !errors.Is(err, gpu.ErrWatchdog) || !strings.Contains(err.Error(), "rank 0 ran for 200ms without calling the runtime") {
		t.Fatalf("%v", err)
	}
	// The abandoned goroutine ends when block closes; let goleak see it gone.
}

func TestReturnedErrorIsReported(t *testing.T) {
	boom := errors.New("boom")
	err := gpu.Launch(1, func(r *gpu.Rank) error {
		if err := r.Barrier(); err != nil { // culprit: last-call
			return err
		}
		return boom
	})
	var re *gpu.RunError
	if !errors.Is(err, boom) || !errors.As(err, &re) || len(re.Findings) != 1 {
		t.Fatalf("%v", err)
	}
	f := re.Findings[0]
	site := fmt.Sprintf("semantics_test.go:%d", markerLine(t, "semantics_test.go", "last-call"))
	if f.Kind != verdict.RankError || f.Message != "rank 0 returned an error: boom" || len(f.Ops) != 1 || f.Ops[0].Site != site {
		t.Fatalf("finding %+v, want rank-error at the rank's last call %s", f, site)
	}
}

func TestSameSeedSameOutcome(t *testing.T) {
	prog := func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 1)
		if r.ID() == 0 {
			var order []int32
			for range 3 {
				st, err := r.Recv(b, gpu.AnySource, gpu.AnyTag)
				if err != nil {
					return err
				}
				order = append(order, int32(st.Source))
			}
			_, err := r.Recv(b, 9%r.Size(), 0) // never sent: a hang
			return err
		}
		return r.Send(b, 0, r.ID())
	}
	for seed := range uint64(30) {
		a := gpu.Launch(4, prog, gpu.Seed(seed))
		b := gpu.Launch(4, prog, gpu.Seed(seed))
		if a == nil || b == nil || a.Error() != b.Error() {
			t.Fatalf("seed %d:\n%v\n---\n%v", seed, a, b)
		}
	}
}

// syncFaults makes every standard send synchronous.
type syncFaults struct{}

func (syncFaults) Sync() bool   { return true }
func (syncFaults) Mutate() bool { return false }
func (syncFaults) Message(m faultsMessage) faultsAction {
	return faultsAction{}
}

func TestCallSiteIsTheUserLine(t *testing.T) {
	lines := make([]int, 2)
	err := gpu.Launch(2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, large)
		var err error
		if r.ID() == 0 {
			_, _, lines[0], _ = runtime.Caller(0)
			err = r.Send(b, 1, 0)
		} else {
			_, _, lines[1], _ = runtime.Caller(0)
			_, err = r.Recv(b, 0, 3)
		}
		return err
	})
	for i, want := range []string{
		fmt.Sprintf("rank 0 blocked in Send to rank 1 tag 0 (4194304 bytes) at semantics_test.go:%d", lines[0]+1),
		fmt.Sprintf("rank 1 blocked in Recv from rank 0 tag 3 (4194304 bytes) at semantics_test.go:%d", lines[1]+1),
	} {
		if !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("rank %d: missing %q in\n%v", i, want, err)
		}
	}
}
