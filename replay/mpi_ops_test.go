package replay_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// mpiTrace builds the post events of an MPI trace as a recorder would write
// them: each rank's ops in order with Seq counting from 0, then Finalize.
func mpiTrace(ranks ...[]trace.Event) replay.Events {
	ev := make(replay.Events, len(ranks))
	for r, ops := range ranks {
		for i, o := range ops {
			o.Kind, o.Rank, o.Seq = trace.KindPost, int32(r), uint64(i)
			ev[r] = append(ev[r], o)
		}
		ev[r] = append(ev[r], trace.Event{Kind: trace.KindPost, Rank: int32(r), Seq: uint64(len(ops)), Op: trace.OpFinalize})
	}
	return ev
}

func siteName(s uintptr) string { return fmt.Sprintf("main.go:%d", s) }

func stuckReport(t *testing.T, out *replay.Outcome) string {
	t.Helper()
	fs := replay.Explain(out, siteName, "", false, "")
	if !out.Stuck || len(fs) == 0 {
		t.Fatalf("not stuck: %s", kinds(fs))
	}
	return fs[0].Text(1) // "[1] KIND (cause: ...)", the message, the blocked calls
}

func TestReplayBarrierReleasesAll(t *testing.T) {
	var ranks [][]trace.Event
	for r := range 4 {
		ranks = append(ranks, []trace.Event{
			{Op: trace.OpCompute, Duration: int64(r) * 1000},
			{Op: trace.OpBarrier, Site: 10},
			{Op: trace.OpBarrier, Comm: int32(3 + r/2), Count: 2, Site: 11}, // ranks 0-1 on comm 3, 2-3 on comm 4
		})
	}
	out, err := replay.Replay(mpiTrace(ranks...).Source(), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stuck || len(out.Problems) != 0 {
		t.Fatalf("%+v", out.Problems)
	}
}

// TestReplayBarrierWithFinalizedMemberIsAMissingCollective: ranks 0 and 1
// wait in a barrier that rank 2 finished without calling: the missing call
// is the finding (a collective-mismatch), with where the others wait.
func TestReplayBarrierWithFinalizedMemberIsAMissingCollective(t *testing.T) {
	bar := []trace.Event{{Op: trace.OpBarrier, Site: 7}}
	out, err := replay.Replay(mpiTrace(bar, bar, nil).Source(), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	text := stuckReport(t, out)
	for _, want := range []string{"[1] collective-mismatch (cause: program)", "rank 0 blocked in Barrier at main.go:7", "rank 1 blocked in Barrier at main.go:7",
		"collective call 1 on the world: ranks 0, 1 called Barrier; rank 2 finished without calling it"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

func TestReplayBarrierAgainstRecvIsDeadlock(t *testing.T) {
	out, err := replay.Replay(mpiTrace(
		[]trace.Event{{Op: trace.OpBarrier, Site: 3}, {Op: trace.OpSend, Peer: 1, Bytes: 4, Count: 1, Dtype: trace.Int32, Site: 4}},
		[]trace.Event{{Op: trace.OpRecv, Peer: 0, Bytes: 4, Count: 1, Dtype: trace.Int32, Site: 5}, {Op: trace.OpBarrier, Site: 3}},
	).Source(), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	text := stuckReport(t, out)
	for _, want := range []string{"[1] deadlock (cause: program)", "rank 0 blocked in Barrier at main.go:3", "rank 1 blocked in Recv from rank 0 tag 0 (4 bytes) at main.go:5"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

func TestReplayProbeWaitsForTheMessage(t *testing.T) {
	out, err := replay.Replay(mpiTrace(
		[]trace.Event{{Op: trace.OpCompute, Duration: 5000}, {Op: trace.OpSend, Peer: 1, Tag: 2, Bytes: 4, Count: 1, Dtype: trace.Int32}},
		[]trace.Event{{Op: trace.OpProbe, Peer: trace.AnySource, Tag: trace.AnyTag}, {Op: trace.OpRecv, Peer: 0, Tag: 2, Bytes: 4, Count: 1, Dtype: trace.Int32}},
	).Source(), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stuck || len(out.Problems) != 0 {
		t.Fatalf("%+v", out.Problems)
	}
}

func TestReplayProbeNeverSatisfiedIsHangWithCandidate(t *testing.T) {
	out, err := replay.Replay(mpiTrace(
		[]trace.Event{{Op: trace.OpSend, Peer: 1, Tag: 4, Bytes: 4, Count: 1, Dtype: trace.Int32}},
		[]trace.Event{{Op: trace.OpProbe, Peer: 0, Tag: 3, Site: 9}},
	).Source(), replay.Config{EagerLimit: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	text := stuckReport(t, out)
	for _, want := range []string{"[1] hang (cause: program)", "rank 1 blocked in Probe from rank 0 tag 3 at main.go:9",
		"nearest candidate: rank 0 sent tag 4 to rank 1; rank 1 waits for Probe from rank 0 tag 3"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

func TestReplayIprobeDoesNotBlock(t *testing.T) {
	// Rank 1 Iprobes before anything was sent (the recorded answer was false),
	// then receives: the Iprobe must not wait for the message.
	out, err := replay.Replay(mpiTrace(
		[]trace.Event{{Op: trace.OpCompute, Duration: 5000}, {Op: trace.OpSend, Peer: 1, Bytes: 4, Count: 1, Dtype: trace.Int32}},
		[]trace.Event{{Op: trace.OpIprobe, Peer: 0}, {Op: trace.OpIprobe, Peer: 0, Tag: 99}, {Op: trace.OpRecv, Peer: 0, Bytes: 4, Count: 1, Dtype: trace.Int32}},
	).Source(), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stuck || len(out.Problems) != 0 {
		t.Fatalf("%+v", out.Problems)
	}
}

// TestBarrierRecordsAndReplays: the code driver's Barrier is recorded and the
// trace replays clean; a rank that skips it hangs the others in both.
func TestBarrierRecordsAndReplays(t *testing.T) {
	c := replay.NewCollector()
	err := gpu.Launch(3, func(r *gpu.Rank) error {
		if err := r.Compute(1000 * 1000 * 1000); err != nil {
			return err
		}
		return r.Barrier()
	}, gpu.RecordTo(c))
	if err != nil {
		t.Fatal(err)
	}
	ev := c.Events(3)
	out, err := replay.Replay(ev.Source(), replay.Config{})
	if err != nil || out.Stuck || len(out.Problems) != 0 {
		t.Fatalf("%v %+v", err, out)
	}
	err = gpu.Launch(3, func(r *gpu.Rank) error {
		if r.ID() == 2 {
			return nil
		}
		return r.Barrier()
	})
	if err == nil || !strings.Contains(err.Error(), "blocked in Barrier") || !strings.Contains(err.Error(), "rank 2 finished without calling it") {
		t.Fatalf("want a stuck barrier that the finished rank 2 never called, got %v", err)
	}
}

// TestReplayOtherCommunicatorIsTheCandidate: a message sent on one
// communicator is never received on another (MPI-3.1 sec. 3.5); the hang
// names the message on the other communicator as the nearest candidate,
// and the hint says so (not to reorder the calls), whether the receive
// waits alone (the send was eager: a hang) or the synchronous send waits
// too (a deadlock). The peer a call names need not be the other side's
// rank: a split that reverses the ranks, one side left on the world (the
// MPI Bugs Initiative's P2PComMatching programs), has rank 1 receive from
// its split's rank 0, world rank 1 itself, what world rank 0 sent it.
func TestReplayOtherCommunicatorIsTheCandidate(t *testing.T) {
	for _, c := range []struct {
		name               string
		send               trace.Op
		sendComm, recvComm int
		recvPeer           int32
		eager              int64
		kind               string
		candidate          string
	}{
		{"receive waits", trace.OpSend, 7, 0, 0, 1 << 20, "[1] hang", "nearest candidate: rank 0 sent tag 0 to rank 1 on comm 7; rank 1 waits for Recv from rank 0 tag 0 (16 bytes) on the world, and a message matches only a receive on its own communicator"},
		{"send waits", trace.OpSsend, 7, 0, 0, 0, "[1] deadlock", "nearest candidate: rank 1 posted Recv from rank 0 tag 0 (16 bytes) on the world; rank 0 sends Ssend to rank 1 tag 0 (16 bytes) on comm 7, and a message matches only a receive on its own communicator"},
		{"receive waits, other peer", trace.OpSend, 0, 7, 1, 1 << 20, "[1] deadlock", "nearest candidate: rank 0 sent tag 0 to rank 1 on the world; rank 1 waits for Recv from rank 1 tag 0 (16 bytes) on comm 7, and a message matches only a receive on its own communicator"},
		{"send waits, other peer", trace.OpSsend, 0, 7, 1, 0, "[1] deadlock", "nearest candidate: rank 1 posted Recv from rank 1 tag 0 (16 bytes) on comm 7; rank 0 sends Ssend to rank 1 tag 0 (16 bytes) on the world, and a message matches only a receive on its own communicator"},
	} {
		ev := mpiTrace(
			[]trace.Event{{Op: c.send, Peer: 1, Comm: int32(c.sendComm), Dtype: trace.Int32, Count: 4, Bytes: 16}},
			[]trace.Event{{Op: trace.OpRecv, Peer: c.recvPeer, Comm: int32(c.recvComm), Dtype: trace.Int32, Count: 4, Bytes: 16}},
		)
		out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: c.eager})
		if err != nil {
			t.Fatal(err)
		}
		report := stuckReport(t, out)
		for _, want := range []string{c.kind, c.candidate, "hint: send and receive on the same communicator: a message sent on one (the world, a dup, a split) is never received on another"} {
			if !strings.Contains(report, want) {
				t.Errorf("%s: report lacks %q:\n%s", c.name, want, report)
			}
		}
	}
}

// TestReplayWildcardThatTookTheMessageIsTheCandidate: rank 1 posts an
// Irecv from any rank, then one from rank 0. Rank 0's message comes first
// and the wildcard takes it (the first posted receive that accepts it,
// MPI-3.1 sec. 3.5); rank 2's, which only the wildcard accepts, stays
// unreceived and the receive from rank 0 waits for ever. The nearest
// candidate names the wildcard receive, with its line, as the race that
// decided the hang; taking rank 2's message, both would have matched.
func TestReplayWildcardThatTookTheMessageIsTheCandidate(t *testing.T) {
	ev := mpiTrace(
		[]trace.Event{{Op: trace.OpSend, Peer: 1, Dtype: trace.Int32, Count: 1, Bytes: 4, Site: 10}},
		[]trace.Event{
			{Op: trace.OpIrecv, Peer: trace.AnySource, Tag: trace.AnyTag, Dtype: trace.Int32, Count: 1, Bytes: 4, Req: 1, Site: 20},
			{Op: trace.OpIrecv, Peer: 0, Dtype: trace.Int32, Count: 1, Bytes: 4, Req: 2, Site: 21},
			{Op: trace.OpWaitall, Reqs: []uint64{1, 2}, Site: 22},
		},
		[]trace.Event{{Op: trace.OpCompute, Duration: 1000}, {Op: trace.OpSend, Peer: 1, Dtype: trace.Int32, Count: 1, Bytes: 4, Site: 30}},
	)
	out, err := replay.Replay(ev.Source(), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	report := stuckReport(t, out)
	for _, want := range []string{
		"nearest candidate: rank 1's Irecv from any rank any tag (4 bytes) (op 0) at main.go:20 took rank 0's Send tag 0, the message rank 1's Irecv from rank 0 tag 0 (4 bytes) waits for, while rank 2's message tag 0, which it accepts too, waits unreceived: had it taken that one, both would have matched",
		"hint: give the wildcard receive a source (or a tag) that excludes the other receive's message, or post the receive that names its source before the wildcard one",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// The other order: rank 2's message first; the wildcard takes it and
	// both match. No finding.
	ev[0] = append([]trace.Event{{Kind: trace.KindPost, Rank: 0, Op: trace.OpCompute, Duration: 2000}}, ev[0]...)
	for i := range ev[0] {
		ev[0][i].Seq = uint64(i)
	}
	if out, err := replay.Replay(ev.Source(), replay.Config{}); err != nil || out.Stuck || len(out.Problems) != 0 {
		t.Fatalf("rank 2's message first: %v stuck %v %+v", err, out.Stuck, out.Problems)
	}
}

// TestReplayWildcardThatTookTheMessageOfAWildcardIsTheCandidate: the stuck
// receive is from any source too, of tag 1 (the MPI Bugs Initiative's
// MessageRace_tag_ANY_TAG_1): the first receive, of any source and any
// tag, took rank 0's tag-1 message; rank 2's tag-2 message, which only the
// first accepts, waits. The candidate names the first receive.
func TestReplayWildcardThatTookTheMessageOfAWildcardIsTheCandidate(t *testing.T) {
	ev := mpiTrace(
		[]trace.Event{{Op: trace.OpSend, Peer: 1, Tag: 1, Dtype: trace.Int32, Count: 1, Bytes: 4, Site: 10}},
		[]trace.Event{
			{Op: trace.OpRecv, Peer: trace.AnySource, Tag: trace.AnyTag, Dtype: trace.Int32, Count: 1, Bytes: 4, Site: 20},
			{Op: trace.OpRecv, Peer: trace.AnySource, Tag: 1, Dtype: trace.Int32, Count: 1, Bytes: 4, Site: 21},
		},
		[]trace.Event{{Op: trace.OpCompute, Duration: 1000}, {Op: trace.OpSend, Peer: 1, Tag: 2, Dtype: trace.Int32, Count: 1, Bytes: 4, Site: 30}},
	)
	out, err := replay.Replay(ev.Source(), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	report := stuckReport(t, out)
	want := "nearest candidate: rank 1's Recv from any rank any tag (4 bytes) (op 0) at main.go:20 took rank 0's Send tag 1, the message rank 1's Recv from any rank tag 1 (4 bytes) waits for, while rank 2's message tag 2, which it accepts too, waits unreceived"
	if !strings.Contains(report, want) {
		t.Errorf("report lacks %q:\n%s", want, report)
	}
}

// TestReplayUnstartedRequestIsTheCandidate: a persistent request its rank
// made and never started (trace.Header.Unstarted) is the candidate of the
// stuck op it would have matched, with its init call and line: MPI-3.1
// sec. 3.9, an inactive request transfers nothing. Rank 0 never started
// its MPI_Send_init to rank 1 tag 7 and waits in a barrier; rank 1's
// Recv from rank 0 waits. A request of another tag, rank or communicator
// is no candidate; and a synchronous send whose receiver never started its
// MPI_Recv_init names that one.
func TestReplayUnstartedRequestIsTheCandidate(t *testing.T) {
	ev := mpiTrace(
		[]trace.Event{{Op: trace.OpBarrier, Site: 10}},
		[]trace.Event{{Op: trace.OpRecv, Peer: 0, Tag: 7, Dtype: trace.Int32, Count: 4, Bytes: 16, Site: 20}, {Op: trace.OpBarrier, Site: 21}},
	)
	never := trace.Unstarted{Rank: 0, Call: "MPI_Send_init", Op: trace.OpIsend, Peer: 1, Tag: 7, Site: "pb.c:50"}
	others := []trace.Unstarted{
		{Rank: 0, Call: "MPI_Send_init", Op: trace.OpIsend, Peer: 1, Tag: 8, Site: "pb.c:51"},
		{Rank: 0, Call: "MPI_Send_init", Op: trace.OpIsend, Peer: 1, Tag: 7, Comm: 3, Site: "pb.c:52"},
		{Rank: 0, Call: "MPI_Recv_init", Op: trace.OpIrecv, Peer: 1, Tag: 7, Site: "pb.c:53"},
		{Rank: 1, Call: "MPI_Send_init", Op: trace.OpIsend, Peer: 0, Tag: 7, Site: "pb.c:54"},
	}
	out, err := replay.Replay(ev.Source(), replay.Config{Unstarted: append(others, never)})
	if err != nil {
		t.Fatal(err)
	}
	report := stuckReport(t, out)
	for _, want := range []string{
		"nearest candidate: rank 0's MPI_Send_init to rank 1 tag 7 at pb.c:50 was never started: it would have matched rank 1's Recv from rank 0 tag 7 (16 bytes), and a persistent request sends nothing until started",
		"hint: start the persistent request (MPI_Start or MPI_Startall) before waiting on it",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	out, err = replay.Replay(ev.Source(), replay.Config{Unstarted: others})
	if err != nil {
		t.Fatal(err)
	}
	if report := stuckReport(t, out); strings.Contains(report, "never started") || strings.Contains(report, "persistent request") {
		t.Errorf("requests that would not have matched named:\n%s", report)
	}

	ev = mpiTrace(
		[]trace.Event{{Op: trace.OpSsend, Peer: 1, Tag: 2, Dtype: trace.Int32, Count: 1, Bytes: 4, Site: 10}},
		[]trace.Event{},
	)
	out, err = replay.Replay(ev.Source(), replay.Config{Unstarted: []trace.Unstarted{
		{Rank: 1, Call: "MPI_Recv_init", Op: trace.OpIrecv, Peer: trace.AnySource, Tag: trace.AnyTag, Comm: 0, Site: "pb.c:60"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := "nearest candidate: rank 1's MPI_Recv_init from any rank any tag at pb.c:60 was never started: it would have matched rank 0's Ssend to rank 1 tag 2 (4 bytes), and a persistent request receives nothing until started"
	if report := stuckReport(t, out); !strings.Contains(report, want) {
		t.Errorf("report lacks %q:\n%s", want, report)
	}
}

// TestReplayHangWithoutCandidateHint: a receive whose message no rank sent,
// with nothing near it to name, gets a hint that says so, not the Hang
// kind's "against the nearest candidate".
func TestReplayHangWithoutCandidateHint(t *testing.T) {
	ev := mpiTrace(
		[]trace.Event{{Op: trace.OpCompute, Duration: 10}},
		[]trace.Event{{Op: trace.OpRecv, Peer: 0, Tag: 3, Dtype: trace.Int32, Count: 1, Bytes: 4, Site: 20}},
	)
	out, err := replay.Replay(ev.Source(), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	report := stuckReport(t, out)
	want := "hint: no rank sent a message the waiting call accepts (or posted a receive its send matches): check its peer rank, tag and communicator, and that the peer reaches the matching call"
	if !strings.Contains(report, want) || strings.Contains(report, "nearest candidate") {
		t.Errorf("report lacks %q (or names a candidate):\n%s", want, report)
	}
}
