package harness

import (
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/replay"
)

// Replay replays a stored trace under each seed and fault plan (Faults,
// Seeds; Expect as in Run) and fails t with the findings of the first run that has any.
func Replay(t testing.TB, path string, opts ...Option) []replay.Finding {
	t.Helper()
	c := config{seeds: 10}
	for _, o := range opts {
		o(&c)
	}
	tr, err := replay.OpenTrace(path)
	if err != nil {
		t.Fatalf("harness: %v", err)
		return nil
	}
	defer tr.Close()
	plans := append([][]string{nil}, c.plans...)
	if *flagFaults != "" {
		plans = [][]string{strings.Split(*flagFaults, ";")}
	}
	n := c.seeds
	if *flagSeeds > 0 {
		n = *flagSeeds
	}
	first := uint64(0)
	if *flagSeed >= 0 {
		first, n = uint64(*flagSeed), 1
	}
	var all []replay.Finding
	for _, plan := range plans {
		specs, err := faults.ParseAll(plan)
		if err != nil {
			t.Fatalf("harness: %v", err)
			return nil
		}
		fs, err := tr.Explore(tr.Config(), specs, first, n, 0, nil)
		if err != nil {
			t.Fatalf("harness: replaying %s: %v", path, err)
			return nil
		}
		all = replay.Dedup(append(all, fs...))
	}
	if len(c.expect) > 0 {
		seen := map[string]bool{}
		for _, f := range all {
			seen[string(f.Kind)] = true
		}
		for _, k := range c.expect {
			if !seen[string(k)] {
				t.Errorf("harness: expected finding %s did not appear replaying %s (seen: %v)", k, path, keys(seen))
			}
		}
		return all
	}
	if len(all) > 0 {
		rep := replay.Report{Findings: all}
		t.Errorf("p2ptrace: replaying %s:\n%s", path, rep.Text())
	}
	return all
}
