package replay_test

import (
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/replay"
)

// A Compacted's sources replay as Events.Source does (it converts the
// events once instead of at every replay), under no fault, mutate (which
// reads sends' Done events) and eager 1, one replay after another from one
// Compacted; and check, which also reads full events (its enumeration of
// AnySource alternatives), finds the same over either.
func TestCompactedReplaysAsEvents(t *testing.T) {
	for name, evs := range map[string]replay.Events{
		"ring":    writeRing(t, t.TempDir()+"/ring", 8, 30, -1),
		"waitany": waitanyRaceTrace(),
		"index":   waitanyIndexTrace(),
		"probe":   probeRaceTrace(false, false),
	} {
		c := evs.Compact()
		for _, cfg := range []replay.Config{{}, {Seed: 1, Faults: mutateOnly{}}, {Seed: 2, EagerLimit: 1}, {}} {
			want, err := replay.Replay(evs.Source(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := replay.Replay(c.Source(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := outcomeText(got), outcomeText(want); g != w {
				t.Errorf("%s under %+v: compacted\n%s\nevents\n%s", name, cfg, g, w)
			}
		}
		check := func(open replay.Opener) string {
			res, err := replay.Check(open, replay.Config{}, siteName, replay.CheckOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, f := range res.Findings {
				b.WriteString(f.Text(1) + "\n")
			}
			return b.String()
		}
		want := check(func() (replay.Source, error) { return evs.Source(), nil })
		if got := check(func() (replay.Source, error) { return c.Source(), nil }); got != want {
			t.Errorf("%s: check over the compacted\n%s\nover the events\n%s", name, got, want)
		}
	}
}
