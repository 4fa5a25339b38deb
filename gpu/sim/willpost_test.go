package sim_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// post is one call of exchangeRun's script.
type post struct {
	send            bool
	peer, tag, comm int
}

// exchangeScript is, per rank, an exchange with every other rank on two
// tags and two communicators, in a shuffled order, with some receives from
// AnySource or of AnyTag: enough entries per queue that the queues are
// indexed, and wildcards that walk them.
func exchangeScript(ranks int, seed uint64) [][]post {
	rng := rand.New(rand.NewPCG(seed, 1))
	script := make([][]post, ranks)
	for r := range ranks {
		for p := range ranks {
			if p == r {
				continue
			}
			for k := range 2 {
				script[r] = append(script[r], post{send: true, peer: p, tag: k, comm: k})
				recv := post{peer: p, tag: k, comm: k}
				switch rng.IntN(8) {
				case 0:
					recv.peer = trace.AnySource
				case 1:
					recv.tag = trace.AnyTag
				}
				script[r] = append(script[r], recv)
			}
		}
		rng.Shuffle(len(script[r]), func(i, j int) { script[r][i], script[r][j] = script[r][j], script[r][i] })
	}
	return script
}

// nopObserver observes nothing; an engine with an Observer keeps match
// times (Op.MatchT).
type nopObserver struct{}

func (nopObserver) Posted(*sim.Op)    {}
func (nopObserver) Completed(*sim.Op) {}

// kindOf is the op of a post of the script.
func kindOf(p post) trace.Op {
	if p.send {
		return trace.OpIsend
	}
	return trace.OpIrecv
}

// exchangeRun runs script on an engine; forecast, if set, is called before
// each post with the rank, its script and the index of the post. It
// returns what the run did: the ranks in the order Next ran them, and each
// op's outcome.
func exchangeRun(t *testing.T, script [][]post, seed uint64, forecast func(e *sim.Engine, r int, s []post, i int)) string {
	t.Helper()
	// (An Observer, so the engine keeps each op's match time to compare.)
	e := sim.New(sim.Config{Ranks: len(script), Seed: seed, Latency: time.Microsecond, EagerLimit: 16, Observer: nopObserver{}})
	var order []int
	ops := make([][]*sim.Op, len(script))
	next := make([]int, len(script))
	for {
		r, ok := e.Next()
		if !ok {
			break
		}
		order = append(order, r)
		s := script[r]
		switch i := next[r]; {
		case i < len(s):
			for ; i < len(s); i++ {
				if forecast != nil {
					forecast(e, r, s, i)
				}
				p := s[i]
				op := e.NewOp(r, kindOf(p))
				op.Peer, op.Tag, op.Comm, op.Dtype, op.Count, op.Bytes = int32(p.peer), int32(p.tag), int32(p.comm), trace.Uint8, int64(8*(i%4)), int64(8*(i%4))
				e.NewRequest(op)
				if p.send {
					e.PostSend(op)
				} else {
					e.PostRecv(op)
				}
				ops[r] = append(ops[r], op)
			}
			next[r] = i + 1
			if !e.Block(e.NewOp(r, trace.OpWaitall), ops[r], false) {
				continue
			}
			fallthrough
		default:
			e.Finalize(e.NewOp(r, trace.OpFinalize))
		}
	}
	out := fmt.Sprintf("stuck %v, problems %d, order %v\n", e.Stuck(), len(e.Problems()), order)
	for r := range ops {
		for _, op := range ops[r] {
			out += fmt.Sprintf("%d.%d: done %v at %d, matched %d.%d at %d, source %d tag %d count %d\n",
				r, op.Seq, op.Done(), op.DoneT, op.MatchRank, op.MatchSeq, op.MatchT(), op.Source, op.StatusTag, op.StatusCnt)
		}
	}
	return out
}

// TestWillPostChangesNothing: forecasts only load memory early. A run whose
// posts are forecast, rightly, wrongly (other peers, tags, communicators,
// ranks out of the world, wildcards) or not at all, is the same run.
func TestWillPostChangesNothing(t *testing.T) {
	const ranks = 24
	for seed := range uint64(3) {
		script := exchangeScript(ranks, seed)
		want := exchangeRun(t, script, seed, nil)
		right := func(e *sim.Engine, r int, s []post, i int) {
			if j := i + sim.PostLead; j < len(s) {
				e.WillPost(r, kindOf(s[j]), s[j].peer, s[j].tag, s[j].comm)
			}
		}
		rng := rand.New(rand.NewPCG(seed, 2))
		wrong := func(e *sim.Engine, r int, s []post, i int) {
			for range rng.IntN(3) {
				peer := rng.IntN(ranks+4) - 2 // (some out of the world)
				if rng.IntN(4) == 0 {
					peer = trace.AnySource
				}
				kind := []trace.Op{trace.OpIsend, trace.OpIrecv, trace.OpSend, trace.OpRecv, trace.OpStreamSend, trace.OpWaitall}[rng.IntN(6)]
				e.WillPost(rng.IntN(ranks+2)-1, kind, peer, rng.IntN(3)-1, rng.IntN(3))
			}
			right(e, r, s, i)
		}
		for name, f := range map[string]func(*sim.Engine, int, []post, int){"right": right, "wrong": wrong} {
			if got := exchangeRun(t, script, seed, f); got != want {
				t.Errorf("seed %d, %s forecasts: the run differs from one without forecasts:\n%s", seed, name, firstDiff(got, want))
			}
		}
	}
}

// firstDiff returns the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}
