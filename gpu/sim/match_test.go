package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// linearQueues is the matching as it was before the index: two slices in
// post and arrival order, scanned from the front. It is the oracle the
// indexed queues must agree with, entry for entry.
type linearQueues struct {
	posted, unexpected []*Op
}

func (q *linearQueues) deliver(send *Op) *Op {
	for i, r := range q.posted {
		if envelopeMatches(send, r) {
			q.posted = slices.Delete(q.posted, i, i+1)
			return r
		}
	}
	q.unexpected = append(q.unexpected, send)
	return nil
}

func (q *linearQueues) post(recv *Op) *Op {
	for i, s := range q.unexpected {
		if envelopeMatches(s, recv) {
			q.unexpected = slices.Delete(q.unexpected, i, i+1)
			return s
		}
	}
	q.posted = append(q.posted, recv)
	return nil
}

func (q *linearQueues) probe(p *Op) *Op {
	for _, s := range q.unexpected {
		if envelopeMatches(s, p) {
			return s
		}
	}
	return nil
}

func (q *linearQueues) recvPosted(send *Op) bool {
	for _, r := range q.posted {
		if envelopeMatches(send, r) {
			return true
		}
	}
	return false
}

// indexedQueues drives rank 0's queues of an engine through postRecv and
// deliverEnvelope.
type indexedQueues struct {
	e  *Engine
	rk *rank
}

func newIndexed() indexedQueues { return newIndexedOf(8) } // (receives name sources up to 7)

func newIndexedOf(ranks int) indexedQueues {
	e := New(Config{Ranks: ranks})
	return indexedQueues{e, &e.ranks[0]}
}

// deliver hands send's envelope to rank 0 and returns the receive it
// matched, or nil (then it waits as unexpected).
func (q indexedQueues) deliver(send *Op) *Op {
	q.e.deliverEnvelope(q.rk, send, 0)
	return send.match
}

// post posts recv on rank 0 and returns the send it matched, or nil.
func (q indexedQueues) post(recv *Op) *Op {
	q.e.postRecv(recv, 0)
	return recv.match
}

func collect(q *matchQueue) []*Op {
	var out []*Op
	for op := range q.all {
		out = append(out, op)
	}
	return out
}

func sendOp(seq uint64, src, tag, comm int) *Op {
	return &Op{Kind: trace.OpIsend, Rank: int32(src), Seq: seq, Peer: 0, Tag: int32(tag), Comm: int32(comm)}
}

func recvOp(seq uint64, src, tag, comm int) *Op {
	return &Op{Kind: trace.OpIrecv, Rank: 0, Seq: seq, Peer: int32(src), Tag: int32(tag), Comm: int32(comm)}
}

func name(op *Op) string {
	if op == nil {
		return "none"
	}
	return fmt.Sprintf("%s#%d(src %d tag %d comm %d)", op.Kind, op.Seq, op.Peer, op.Tag, op.Comm)
}

// TestIndexedMatchingAgreesWithLinear is the matching index's oracle test:
// random streams of arriving sends, posted receives (specific, AnySource,
// AnyTag, both, forced), probes and ready-send checks, in phases that grow
// the queues well past smallQueue and drain them again, must match every
// message with the same partner as the linear scan, and leave the queues in
// the same order. The second shape has the keys of many sources, so the
// indexes file them by source (bySrc), some of a source there and the rest
// in their keyTable.
func TestIndexedMatchingAgreesWithLinear(t *testing.T) {
	t.Run("few sources", func(t *testing.T) {
		agreesWithLinear(t, 8, func(rng *rand.Rand) (int, int, int) {
			return 1 + rng.IntN(6), 1 + rng.IntN(5), 1 + rng.IntN(2)
		})
	})
	t.Run("many sources", func(t *testing.T) {
		if dense := agreesWithLinear(t, 96, func(rng *rand.Rand) (int, int, int) {
			return 40 + rng.IntN(56), 1 + rng.IntN(3), 1 + rng.IntN(2)
		}); dense == 0 {
			t.Fatal("no index filed its keys by source")
		}
	})
}

// agreesWithLinear runs the oracle test on an engine of the given ranks,
// with shape drawing each seed's numbers of sources, tags and comms, and
// returns how many seeds had an index file keys by source.
func agreesWithLinear(t *testing.T, ranks int, shape func(*rand.Rand) (srcs, tags, comms int)) (dense int) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		srcs, tags, comms := shape(rng)
		wild := rng.Float64() * 0.4 // how often a receive has a wildcard
		var lin linearQueues
		ix := newIndexedOf(ranks)
		wentDense := false
		var seq uint64
		for step := range 3000 {
			// Phases: mostly sends, then mostly receives, so that each queue
			// grows past the threshold and empties again.
			sendBias := 0.8
			if (step/150)%2 == 1 {
				sendBias = 0.2
			}
			seq++
			switch x := rng.Float64(); {
			case x < 0.05: // a probe
				p := recvOp(seq, rng.IntN(srcs), rng.IntN(tags), rng.IntN(comms))
				p.Kind = trace.OpIprobe
				if rng.Float64() < 0.5 {
					p.Peer = trace.AnySource
				}
				if rng.Float64() < 0.5 {
					p.Tag = trace.AnyTag
				}
				if got, want := probeMatch(ix.rk, p), lin.probe(p); got != want {
					t.Fatalf("seed %d step %d: probe %s found %s, want %s", seed, step, name(p), name(got), name(want))
				}
			case x < 0.10: // a ready send's check
				s := sendOp(seq, rng.IntN(srcs), rng.IntN(tags), rng.IntN(comms))
				if got, want := ix.e.recvPosted(ix.rk, s), lin.recvPosted(s); got != want {
					t.Fatalf("seed %d step %d: recvPosted(%s) = %v, want %v", seed, step, name(s), got, want)
				}
			case x < 0.10+0.9*sendBias:
				s := sendOp(seq, rng.IntN(srcs), rng.IntN(tags), rng.IntN(comms))
				if got, want := ix.deliver(s), lin.deliver(s); got != want {
					t.Fatalf("seed %d step %d: send %s matched %s, want %s", seed, step, name(s), name(got), name(want))
				}
			default:
				r := recvOp(seq, rng.IntN(srcs), rng.IntN(tags), rng.IntN(comms))
				if rng.Float64() < wild {
					r.Peer = trace.AnySource
				}
				if rng.Float64() < wild {
					r.Tag = trace.AnyTag
				}
				if rng.Float64() < 0.03 {
					// Forced, as check forces an AnySource receive (and,
					// rarely, a forced receive naming another source).
					r.Force(int32(rng.IntN(srcs)))
					if rng.Float64() < 0.7 {
						r.Peer = trace.AnySource
					}
				}
				if got, want := ix.post(r), lin.post(r); got != want {
					t.Fatalf("seed %d step %d: receive %s matched %s, want %s", seed, step, name(r), name(got), name(want))
				}
			}
			for _, q := range []*matchQueue{&ix.rk.posted, &ix.rk.unexpected} {
				if q.ix != nil && q.ix.bySrc != nil {
					wentDense = true
				}
			}
			if step%50 == 0 || step == 2999 {
				if got := collect(&ix.rk.posted); !slices.Equal(got, lin.posted) {
					t.Fatalf("seed %d step %d: posted queue differs: %d entries, want %d", seed, step, len(got), len(lin.posted))
				}
				if got := collect(&ix.rk.unexpected); !slices.Equal(got, lin.unexpected) {
					t.Fatalf("seed %d step %d: unexpected queue differs: %d entries, want %d", seed, step, len(got), len(lin.unexpected))
				}
			}
		}
		if wentDense {
			dense++
		}
	}
	return dense
}

// filler fills both queues of q past smallQueue with entries of comm 9,
// which nothing else in these tests uses, so that what follows goes through
// the index.
func filler(q indexedQueues) {
	for i := range smallQueue + 1 {
		q.post(recvOp(1000+uint64(i), 0, 0, 9))
		q.deliver(sendOp(2000+uint64(i), 1, 5, 9))
	}
	if q.rk.posted.ix == nil || q.rk.unexpected.ix == nil {
		panic("filler: queues not indexed")
	}
}

// Non-overtaking across keys: a send matches the earliest posted receive
// that accepts it, whether that one names its source and tag or is a
// wildcard filed under another key.
func TestIndexedSendMatchesEarliestReceiveAcrossKeys(t *testing.T) {
	q := newIndexed()
	filler(q)
	anyTag := recvOp(1, 2, trace.AnyTag, 0)
	exact := recvOp(2, 2, 7, 0)
	anySrc := recvOp(3, trace.AnySource, 7, 0)
	both := recvOp(4, trace.AnySource, trace.AnyTag, 0)
	for _, r := range []*Op{anyTag, exact, anySrc, both} {
		q.post(r)
	}
	for i, want := range []*Op{anyTag, exact, anySrc, both} {
		if got := q.deliver(sendOp(10+uint64(i), 2, 7, 0)); got != want {
			t.Fatalf("send %d matched %s, want %s", i, name(got), name(want))
		}
	}
}

// A wildcard receive takes the earliest arrived send it accepts across
// sources and tags; a specific one takes the earliest of its own source and
// tag, even when other sends arrived before it.
func TestIndexedReceiveTakesEarliestArrival(t *testing.T) {
	q := newIndexed()
	filler(q)
	s1 := sendOp(1, 3, 4, 0)
	s2 := sendOp(2, 2, 4, 0)
	s3 := sendOp(3, 2, 6, 0)
	s4 := sendOp(4, 2, 4, 0)
	for _, s := range []*Op{s1, s2, s3, s4} {
		q.deliver(s)
	}
	if got := q.post(recvOp(10, 2, 4, 0)); got != s2 {
		t.Fatalf("specific receive took %s, want %s", name(got), name(s2))
	}
	if got := q.post(recvOp(11, 2, trace.AnyTag, 0)); got != s3 {
		t.Fatalf("AnyTag receive took %s, want %s", name(got), name(s3))
	}
	if got := q.post(recvOp(12, trace.AnySource, 4, 0)); got != s1 {
		t.Fatalf("AnySource receive took %s, want %s", name(got), name(s1))
	}
	if got := q.post(recvOp(13, trace.AnySource, trace.AnyTag, 0)); got != s4 {
		t.Fatalf("wildcard receive took %s, want %s", name(got), name(s4))
	}
}

// Communicators never mix: an indexed receive of comm 1 takes no send of
// comm 0, even with both wildcards.
func TestIndexedCommunicatorsApart(t *testing.T) {
	q := newIndexed()
	filler(q)
	s := sendOp(1, 2, 4, 0)
	q.deliver(s)
	if got := q.post(recvOp(2, trace.AnySource, trace.AnyTag, 1)); got != nil {
		t.Fatalf("receive on comm 1 took %s", name(got))
	}
	if got := q.deliver(sendOp(3, 2, 4, 1)); got == nil || got.Comm != 1 {
		t.Fatalf("send on comm 1 matched %s, want the receive of comm 1", name(got))
	}
}

// A probe sees the earliest arrived send it accepts and leaves it there:
// the receive after it takes that same send.
func TestIndexedProbeSeesUnexpectedInOrder(t *testing.T) {
	q := newIndexed()
	filler(q)
	s1 := sendOp(1, 2, 4, 0)
	s2 := sendOp(2, 3, 4, 0)
	q.deliver(s1)
	q.deliver(s2)
	p := recvOp(3, trace.AnySource, 4, 0)
	p.Kind = trace.OpIprobe
	for range 2 {
		if got := probeMatch(q.rk, p); got != s1 {
			t.Fatalf("probe found %s, want %s", name(got), name(s1))
		}
	}
	if got := q.post(recvOp(4, trace.AnySource, 4, 0)); got != s1 {
		t.Fatalf("receive after the probe took %s, want %s", name(got), name(s1))
	}
	if got := probeMatch(q.rk, p); got != s2 {
		t.Fatalf("second probe found %s, want %s", name(got), name(s2))
	}
}

// A forced AnySource receive (check's alternatives) accepts its forced
// source only, in the index as in the slice.
func TestIndexedForcedReceive(t *testing.T) {
	q := newIndexed()
	filler(q)
	s1 := sendOp(1, 2, 4, 0)
	s2 := sendOp(2, 3, 4, 0)
	q.deliver(s1)
	q.deliver(s2)
	r := recvOp(3, trace.AnySource, 4, 0)
	r.Force(3)
	if got := q.post(r); got != s2 {
		t.Fatalf("forced receive took %s, want %s", name(got), name(s2))
	}
}

// The queues go back to plain slices once empty, and the index is reused.
func TestIndexEmptiedIsReused(t *testing.T) {
	q := newIndexed()
	var sends []*Op
	for i := range 3 * smallQueue {
		s := sendOp(uint64(i), i%5, i, 0)
		sends = append(sends, s)
		q.deliver(s)
	}
	if q.rk.unexpected.ix == nil {
		t.Fatal("unexpected queue not indexed")
	}
	for i, s := range sends {
		if got := q.post(recvOp(100+uint64(i), trace.AnySource, trace.AnyTag, 0)); got != s {
			t.Fatalf("receive %d took %s, want %s", i, name(got), name(s))
		}
	}
	if q.rk.unexpected.ix != nil || len(q.e.spareIx) != 1 {
		t.Fatalf("emptied queue: indexed %v, %d spare indexes", q.rk.unexpected.ix != nil, len(q.e.spareIx))
	}
}

// Retiring requests in any order finds each by its id; Finalize reports
// those left active in the order they were made.
func TestRetireAnyOrder(t *testing.T) {
	e := New(Config{Ranks: 1})
	rk := &e.ranks[0]
	var ops []*Op
	for range 40 {
		op := e.NewOp(0, trace.OpIrecv)
		e.NewRequest(op)
		ops = append(ops, op)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	left := map[*Op]bool{}
	for i, j := range rng.Perm(len(ops)) {
		if i%5 == 4 {
			left[ops[j]] = true
			continue
		}
		e.retire(rk, ops[j])
		if rng.IntN(4) == 0 { // new requests meanwhile
			op := e.NewOp(0, trace.OpIsend)
			e.NewRequest(op)
			ops = append(ops, op)
			left[op] = true
		}
	}
	var active []*Op
	for _, op := range rk.active[rk.activeHead:] {
		if op != nil {
			active = append(active, op)
		}
	}
	var want []*Op
	for _, op := range ops {
		if left[op] {
			want = append(want, op)
		}
	}
	if !slices.Equal(active, want) {
		t.Fatalf("active: %d requests, want %d in request order", len(active), len(want))
	}
	for _, op := range want {
		e.retire(rk, op)
	}
	if len(rk.active) != 0 || rk.activeHead != 0 {
		t.Fatalf("all retired, yet active has %d (head %d)", len(rk.active), rk.activeHead)
	}
}

// TestActiveStaysBoundedWithOneLeft: a rank that always has a request
// left active (each waited after the next is made) never retires all of
// them at once, yet its active list stays a few entries long: a full list,
// mostly retired, moves its rest to the front rather than growing.
func TestActiveStaysBoundedWithOneLeft(t *testing.T) {
	e := New(Config{Ranks: 1})
	rk := &e.ranks[0]
	var prev *Op
	for range 10000 {
		op := e.NewOp(0, trace.OpIsend)
		e.NewRequest(op)
		if prev != nil {
			e.retire(rk, prev)
		}
		prev = op
	}
	if c := cap(rk.active); c > 16 {
		t.Fatalf("active list grew to capacity %d for one request left", c)
	}
	if live := rk.active[rk.activeHead:]; len(live) != 1 || live[0] != prev {
		t.Fatalf("active holds %d requests past its head, want the last one", len(live))
	}
}
