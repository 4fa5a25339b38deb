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
		sourcesReplayAlike(t, name, "compacted", evs.Source, c.Source,
			[]replay.Config{{}, {Seed: 1, Faults: mutateOnly{}}, {Seed: 2, EagerLimit: 1}, {}})
	}
}

// sourcesReplayAlike replays a trace from two of its sources, want's and
// got's (each call a fresh source), under each of cfgs, one replay after
// another, and checks it from each: the outcomes and the findings must be
// the same. It returns check's report over want's.
func sourcesReplayAlike(t *testing.T, name, gotName string, want, got func() replay.Source, cfgs []replay.Config) string {
	t.Helper()
	for _, cfg := range cfgs {
		w, err := replay.Replay(want(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		g, err := replay.Replay(got(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if gt, wt := outcomeText(g), outcomeText(w); gt != wt {
			t.Errorf("%s under %+v: %s\n%s\nevents\n%s", name, cfg, gotName, gt, wt)
		}
	}
	check := func(src func() replay.Source) string {
		res, err := replay.Check(func() (replay.Source, error) { return src(), nil }, replay.Config{}, siteName, replay.CheckOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, f := range res.Findings {
			b.WriteString(f.Text(1) + "\n")
		}
		return b.String()
	}
	wc := check(want)
	if gc := check(got); gc != wc {
		t.Errorf("%s: check over the %s\n%s\nover the events\n%s", name, gotName, gc, wc)
	}
	return wc
}
