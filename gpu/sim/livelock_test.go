package sim_test

import (
	"github.com/p2ptrace/p2ptrace/verdict"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestIprobeLivelockIsHang: rank 0 polls Iprobe (Compute between polls) for
// tag 3 from rank 1, which sends tag 2 and finishes; rank 2 polls Iprobe for
// tag 9 from rank 1. Each poller is parked at the limit; nothing can change,
// so the run is a hang naming both pollers and their envelopes, not a
// deadlock (pollers are in no wait-for cycle).
func TestIprobeLivelockIsHang(t *testing.T) {
	const limit = 20
	e := sim.New(sim.Config{Ranks: 3, PollLimit: limit})
	polls := [3]int{}
	sent := false
	for {
		r, ok := e.Next()
		if !ok {
			break
		}
		for cont := true; cont; {
			switch r {
			case 1:
				if sent {
					e.Finalize(e.NewOp(1, trace.OpFinalize))
					cont = false
					break
				}
				s := e.NewOp(1, trace.OpSend)
				s.Peer, s.Tag, s.Bytes = 0, 2, 8
				e.PostSend(s)
				sent = true
				cont = e.BlockOn(s)
			default:
				p := e.NewOp(r, trace.OpIprobe)
				p.Peer, p.Tag = 1, 3
				if r == 2 {
					p.Tag = 9
				}
				e.Iprobe(p)
				polls[r]++
				if p.Flag {
					t.Fatalf("rank %d: Iprobe found a message", r)
				}
				if polls[r] > 10*limit {
					t.Fatalf("rank %d polled %d times: never parked", r, polls[r])
				}
				if e.Parked(r) {
					cont = false
					break
				}
				c := e.NewOp(r, trace.OpCompute)
				e.Post(c)
				cont = e.Compute(c, 1000)
			}
		}
	}
	ps := e.Problems()
	if !e.Stuck() || len(ps) != 1 || ps[0].Kind != verdict.Hang {
		t.Fatalf("stuck %v, problems %+v", e.Stuck(), ps)
	}
	p := ps[0]
	if len(p.Blocked) != 2 || !p.Blocked[0].Polls || !p.Blocked[1].Polls || p.Blocked[0].Call.Kind != trace.OpIprobe {
		t.Fatalf("blocked %+v", p.Blocked)
	}
	for _, want := range []string{
		"rank 0 polls (Iprobe) Iprobe from rank 1 tag 3; rank 1 has finished",
		"rank 2 polls (Iprobe) Iprobe from rank 1 tag 9; rank 1 has finished",
	} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, p.Message)
		}
	}
	if len(p.Candidates) == 0 || !strings.Contains(p.Candidates[0], "rank 1 sent tag 2 to rank 0") {
		t.Errorf("candidates %q", p.Candidates)
	}
	if polls[0] != limit || polls[2] > limit+2 {
		t.Errorf("polls %v, want %d for rank 0 (parked at the limit, nothing changed after)", polls, limit)
	}
}
