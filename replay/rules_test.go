package replay_test

import (
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// isendIrecv is both ranks posting Isend then Irecv to each other, then
// waiting for both: fine under MPI's (and gloo's) rules.
func isendIrecv(group bool) replay.Events {
	rank := func(peer int32) []trace.Event {
		ops := []trace.Event{
			{Op: trace.OpIsend, Peer: peer, Count: 4, Bytes: 16, Dtype: trace.Float32, Req: 1, Site: 12},
			{Op: trace.OpIrecv, Peer: peer, Count: 4, Bytes: 16, Dtype: trace.Float32, Req: 2, Site: 13},
			{Op: trace.OpWaitall, Reqs: []uint64{1, 2}, Site: 14},
		}
		if group {
			ops = append([]trace.Event{{Op: trace.OpGroupStart}}, ops...)
			ops = append(ops[:3], append([]trace.Event{{Op: trace.OpGroupEnd}}, ops[3:]...)...)
		}
		return ops
	}
	return mpiTrace(rank(1), rank(0))
}

func TestNCCLRulesIsendIrecvHeadToHeadDeadlocks(t *testing.T) {
	out, err := replay.Replay(isendIrecv(false).Source(), replay.Config{EagerLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stuck || len(out.Problems) != 0 {
		t.Fatalf("as recorded (MPI rules): %+v", out.Problems)
	}
	out, err = replay.Replay(replay.NCCLSource(isendIrecv(false).Source()), replay.Config{EagerLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	text := stuckReport(t, out)
	for _, want := range []string{"deadlock", "wait-for cycle: rank 0 -> rank 1 -> rank 0",
		"rank 0 blocked in Waitall at main.go:14", "waiting for Stream.Send to rank 1 (16 bytes) at main.go:12"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

func TestNCCLRulesGroupProgressesTogether(t *testing.T) {
	out, err := replay.Replay(replay.NCCLSource(isendIrecv(true).Source()), replay.Config{EagerLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stuck || len(out.Problems) != 0 {
		t.Fatalf("a batch (GroupStart..GroupEnd) under NCCL rules: %+v", out.Problems)
	}
}

func TestNCCLRulesBlockingSendWaitsAndCountsMustAgree(t *testing.T) {
	ev := mpiTrace(
		[]trace.Event{{Op: trace.OpSend, Peer: 1, Count: 4, Bytes: 16, Dtype: trace.Float32, Site: 9}},
		[]trace.Event{{Op: trace.OpRecv, Peer: 0, Count: 8, Bytes: 32, Dtype: trace.Float32, Site: 10}},
	)
	out, err := replay.Replay(replay.NCCLSource(ev.Source()), replay.Config{EagerLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	fs := replay.Explain(out, siteName, "", false, "")
	if len(fs) == 0 || fs[0].Kind != "count-mismatch" || !strings.Contains(fs[0].Message, "rank 0 sends 4 elements, rank 1 receives 8") {
		t.Fatalf("findings: %s", kinds(fs))
	}
}

func TestParseRules(t *testing.T) {
	for in, want := range map[string]replay.Rules{"nccl": replay.RulesNCCL, "gloo": replay.RulesRecorded, "mpi": replay.RulesRecorded} {
		if got, err := replay.ParseRules(in); err != nil || got != want {
			t.Errorf("ParseRules(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := replay.ParseRules("ucc"); err == nil {
		t.Error("ParseRules(ucc): no error")
	}
	if r := replay.DefaultRules(trace.Header{Backend: "torch.distributed gloo (torch 1.13.1)"}); r != replay.RulesNCCL {
		t.Errorf("torch trace: default rules %q", r)
	}
	if r := replay.DefaultRules(trace.Header{Backend: "Open MPI v4.1.4"}); r != replay.RulesRecorded {
		t.Errorf("MPI trace: default rules %q", r)
	}
}

// TestNCCLRulesBlockingSendReportedAsTheCall: a blocking send replayed
// under NCCL's rules is a stream send and a wait of the same line; a rank
// stuck there is blocked in the send, as the recording (gloo) says, not in
// a wait the program never wrote.
func TestNCCLRulesBlockingSendReportedAsTheCall(t *testing.T) {
	ev := mpiTrace(
		[]trace.Event{{Op: trace.OpSend, Peer: 1, Count: 4, Bytes: 16, Dtype: trace.Float32, Site: 6}, {Op: trace.OpRecv, Peer: 1, Count: 4, Bytes: 16, Dtype: trace.Float32, Site: 7}},
		[]trace.Event{{Op: trace.OpSend, Peer: 0, Count: 4, Bytes: 16, Dtype: trace.Float32, Site: 6}, {Op: trace.OpRecv, Peer: 0, Count: 4, Bytes: 16, Dtype: trace.Float32, Site: 7}},
	)
	out, err := replay.Replay(replay.NCCLSource(ev.Source()), replay.Config{EagerLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	text := stuckReport(t, out)
	for _, want := range []string{"rank 0 blocked in Stream.Send to rank 1 (16 bytes) at main.go:6", "rank 1 blocked in Stream.Send to rank 0 (16 bytes) at main.go:6"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "blocked in Wait") || strings.Contains(text, "waiting for") {
		t.Errorf("report names the replay's own wait:\n%s", text)
	}
}
