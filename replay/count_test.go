package replay_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// TestNegativeCountReplaysAsInvalidCall: a recorded call with a negative
// count (the program's MPI_ERR_COUNT: a message op's count and size both
// negative, a collective's size negative) replays as an invalid-call of its
// rank at its site, not as a trace that does not replay; sizes no call can
// have (a message op's count and size of opposite signs, a collective's
// communicator size negative) still refuse the trace.
func TestNegativeCountReplaysAsInvalidCall(t *testing.T) {
	send := func(count, bytes int64) trace.Event {
		return trace.Event{Kind: trace.KindPost, Rank: 0, Seq: 0, Op: trace.OpSend, Peer: 1, Tag: 3, Dtype: trace.Int32, Count: count, Bytes: bytes, Site: 7, MatchRank: trace.NoRank}
	}
	bcast := func(r int32, size, bytes int64) trace.Event {
		return trace.Event{Kind: trace.KindPost, Rank: r, Seq: 0, Op: trace.OpBcast, Peer: 0, Tag: r, Dtype: trace.Int32, Count: size, Bytes: bytes, Site: 7, MatchRank: trace.NoRank}
	}
	for _, c := range []struct {
		name string
		evs  replay.Events
		bad  bool // the trace does not replay
	}{
		{"send", replay.Events{{send(-1, -4)}, {}}, false},
		{"send-empty-type", replay.Events{{send(-1, 0)}, {}}, false},
		{"bcast", replay.Events{{bcast(0, 2, -8)}, {bcast(1, 2, 8)}}, false},
		{"send-negative-bytes", replay.Events{{send(1, -4)}, {}}, true},
		{"send-positive-bytes", replay.Events{{send(-1, 4)}, {}}, true},
		{"bcast-negative-size", replay.Events{{bcast(0, -2, 8)}, {bcast(1, 2, 8)}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := replay.Replay(c.evs.Source(), replay.Config{})
			if c.bad {
				if err == nil || !strings.Contains(err.Error(), "trace does not replay: rank 0 seq 0") {
					t.Fatalf("err %v, want the trace refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fs := replay.Explain(out, siteName, "", false, "")
			i := slices.IndexFunc(fs, func(f replay.Finding) bool { return f.Kind == verdict.InvalidCall })
			if i < 0 || !slices.Equal(fs[i].Ranks, []int{0}) || len(fs[i].Ops) != 1 || fs[i].Ops[0].Site != "main.go:7" ||
				!strings.Contains(fs[i].Message, "negative") {
				t.Fatalf("findings %+v, want rank 0's invalid call at main.go:7", fs)
			}
		})
	}
}
