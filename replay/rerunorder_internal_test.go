package replay

import (
	"slices"
	"testing"

	"github.com/p2ptrace/p2ptrace/verdict"
)

// race is a clean race of rank 0's receive number seq at recvSite, which
// could have taken rank src's message sent at sendSite.
func race(seq uint64, recvSite string, src int, sendSite string) cleanRace {
	return cleanRace{
		match: ForcedMatch{Rank: 0, Seq: seq, Src: src},
		race: Finding{Kind: verdict.MessageRace, Ops: []verdict.OpRef{
			{Rank: 0, Seq: seq, Op: "Recv", Site: recvSite},
			{Rank: src, Op: "Send", Site: sendSite},
		}},
	}
}

// TestRerunOrderTriesEachSenderOfALineAfterEachPairOfLines: each pair of
// (receive line, sender line) is re-run once, first, in the races' order;
// then each further sender rank of a pair while under the cap; a second
// race of a pair and rank (another receive of that line) is never re-run.
func TestRerunOrderTriesEachSenderOfALineAfterEachPairOfLines(t *testing.T) {
	races := []cleanRace{
		race(0, "a.c:10", 2, "a.c:20"), // pair (10, 20), rank 2: first round
		race(0, "a.c:10", 3, "a.c:20"), // same pair, rank 3: second round
		race(1, "a.c:10", 3, "a.c:20"), // same pair and rank: never
		race(0, "a.c:10", 4, "a.c:30"), // pair (10, 30): first round
		race(1, "a.c:10", 5, "a.c:20"), // same pair as the first, rank 5: second round
	}
	order := func(limit int) []ForcedMatch {
		var out []ForcedMatch
		picked, first := rerunOrder(races, limit)
		if first != 2 {
			t.Errorf("limit %d: %d of the first round, want 2", limit, first)
		}
		for _, c := range picked {
			out = append(out, c.match)
		}
		return out
	}
	m := func(seq uint64, src int) ForcedMatch { return ForcedMatch{Rank: 0, Seq: seq, Src: src} }
	if got, want := order(16), []ForcedMatch{m(0, 2), m(0, 4), m(0, 3), m(1, 5)}; !slices.Equal(got, want) {
		t.Errorf("limit 16: %v, want %v", got, want)
	}
	if got, want := order(3), []ForcedMatch{m(0, 2), m(0, 4), m(0, 3)}; !slices.Equal(got, want) {
		t.Errorf("limit 3: %v, want %v", got, want)
	}
	// The first round is never cut by the cap here: judgeRaces counts what
	// it cannot run as left (unconfirmed), as before the second round.
	if got, want := order(1), []ForcedMatch{m(0, 2), m(0, 4)}; !slices.Equal(got, want) {
		t.Errorf("limit 1: %v, want %v", got, want)
	}
}

// TestRerunOrderLeavesOutMessagesAnEarlierReceiveTook: rank 0's two
// wildcard receives of one line took ranks 1's and 2's messages when
// recorded; the second receive's other sender, rank 1, was taken by the
// first: pinned, it would wait for ever. The first receive's other sender,
// rank 2, whose message a later receive took, is the pair's first re-run.
func TestRerunOrderLeavesOutMessagesAnEarlierReceiveTook(t *testing.T) {
	mk := func(seq uint64, got, alt int) cleanRace {
		return cleanRace{
			match: ForcedMatch{Rank: 0, Seq: seq, Src: alt},
			race: Finding{Kind: verdict.MessageRace, Ops: []verdict.OpRef{
				{Rank: 0, Seq: seq, Op: "Recv", Site: "a.c:10"},
				{Rank: got, Seq: 0, Op: "Send", Site: "a.c:20"},
				{Rank: alt, Seq: 0, Op: "Send", Site: "a.c:20"},
			}},
		}
	}
	races := []cleanRace{mk(0, 1, 2), mk(1, 2, 1), mk(2, 3, 1)}
	picked, first := rerunOrder(races, 16)
	if first != 1 || len(picked) != 1 || picked[0].match != (ForcedMatch{Rank: 0, Seq: 0, Src: 2}) {
		t.Errorf("picked %v (first round %d), want the first receive's re-run alone", picked, first)
	}
}
