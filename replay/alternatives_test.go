package replay

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// alternativesByScan is the enumeration as the rule states it, each
// receive scanning every kind of message to its rank: what alternatives
// must agree with.
func alternativesByScan(ev Events, limit int) ([]ForcedMatch, Enumeration) {
	en := Enumeration{Cap: limit}
	byDst := map[int32][]sendKey{}
	kinds := map[sendKey]bool{}
	for r := range ev {
		for _, e := range ev[r] {
			if e.Kind == trace.KindPost && e.Op.IsSend() && e.Op != trace.OpStreamSend {
				k := sendKey{int32(r), e.Peer, e.Comm, e.Tag}
				if !kinds[k] {
					kinds[k] = true
					byDst[k.dst] = append(byDst[k.dst], k)
				}
			}
		}
	}
	for _, ks := range byDst {
		slices.SortFunc(ks, func(a, b sendKey) int {
			return cmp.Or(cmp.Compare(a.src, b.src), cmp.Compare(a.comm, b.comm), cmp.Compare(a.tag, b.tag))
		})
	}
	seen := map[siteSender]bool{}
	var first, rest []ForcedMatch
	for r := range ev {
		posted := map[uint64]trace.Event{}
		for _, e := range ev[r] {
			if e.Kind == trace.KindPost {
				if (e.Op == trace.OpRecv || e.Op == trace.OpIrecv) && e.Peer == trace.AnySource {
					posted[e.Seq] = e
				}
				continue
			}
			p, ok := posted[e.Seq]
			if !ok {
				continue
			}
			delete(posted, e.Seq)
			if e.MatchRank < 0 {
				continue
			}
			en.Receives++
			last := int32(-1)
			for _, k := range byDst[int32(r)] {
				if k.src == last || k.src == e.MatchRank || !sim.Accepts(trace.AnySource, p.Tag, p.Comm, k.src, k.tag, k.comm) {
					continue
				}
				last = k.src
				en.Alternatives++
				a := ForcedMatch{Rank: r, Seq: e.Seq, Src: int(k.src)}
				if ss := (siteSender{p.Site, k.src}); !seen[ss] {
					seen[ss] = true
					if len(first) < limit {
						first = append(first, a)
					}
				} else if len(rest) < limit {
					rest = append(rest, a)
				}
			}
		}
	}
	alts := append(first, rest...)
	if len(alts) > limit {
		alts = alts[:limit]
	}
	slices.SortFunc(alts, func(a, b ForcedMatch) int {
		return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Src, b.Src))
	})
	en.CutShort = en.Alternatives > len(alts)
	return alts, en
}

// randomReceives is a trace of random sends and AnySource receives (the
// events alternatives reads; they need not replay): few sites, tags and
// communicators, so that receives share them.
func randomReceives(rng *rand.Rand) Events {
	ranks := 2 + rng.IntN(6)
	ev := make(Events, ranks)
	for r := range ev {
		var seq uint64
		for range rng.IntN(60) {
			comm, tag := int32(rng.IntN(2)), int32(rng.IntN(3))
			if rng.IntN(2) == 0 {
				ev[r] = append(ev[r], trace.Event{Kind: trace.KindPost, Rank: int32(r), Seq: seq, Op: trace.OpSend, Peer: int32(rng.IntN(ranks)), Comm: comm, Tag: tag})
			} else {
				if rng.IntN(4) == 0 {
					tag = trace.AnyTag
				}
				match := int32(rng.IntN(ranks+1) - 1) // -1: never matched
				ev[r] = append(ev[r],
					trace.Event{Kind: trace.KindPost, Rank: int32(r), Seq: seq, Op: trace.OpRecv, Peer: trace.AnySource, Comm: comm, Tag: tag, Site: uint32(1 + rng.IntN(3))},
					trace.Event{Kind: trace.KindDone, Rank: int32(r), Seq: seq, Op: trace.OpRecv, MatchRank: match})
			}
			seq++
		}
	}
	return ev
}

// TestAlternativesAgreesWithScan: the enumeration that skips what cannot
// change the list lists the same alternatives, and counts the same, as a
// scan of every kind of message per receive, under caps that cut it short
// early, late and not at all.
func TestAlternativesAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cut := 0
	for i := range 600 {
		ev := randomReceives(rng)
		limit := []int{1, 2, 3, 5, 8, 20, MaxForcedReplays}[i%7]
		want, wantEn := alternativesByScan(ev, limit)
		got, gotEn, err := alternatives(func() (Source, error) { return ev.Source(), nil }, limit, &readyScan{})
		if err != nil {
			t.Fatal(err)
		}
		if gotEn.CutShort {
			cut++
		}
		if !reflect.DeepEqual(got, want) || gotEn != wantEn {
			t.Fatalf("trace %d, limit %d:\ngot  %v %+v\nwant %v %+v", i, limit, got, gotEn, want, wantEn)
		}
	}
	if cut < 100 {
		t.Fatalf("only %d of the traces were cut short: the test does not exercise the settled list", cut)
	}
}
