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
		for _, c := range rerunOrder(races, limit) {
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
