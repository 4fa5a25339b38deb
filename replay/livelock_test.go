package replay_test

import (
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// A recorded polling livelock replays to the same hang, under every plan
// (the schedule changes how many polls fall after the last change of state;
// the rank whose record ends polling polls on); its fixed twin, whose polls
// succeed after many fruitless ones, replays clean.
func TestPollLivelockVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("records a scenario program; skipped with -short")
	}
	t.Parallel()
	s := newScenarios(t)
	tr := s.record("poll-livelock")
	if st := tr.Header().Status; st != trace.StatusHung {
		t.Fatalf("status %s, want hung", st)
	}
	for _, plan := range []string{"", "sync", "delay"} {
		var specs []string
		ranks := []int{0}
		if plan != "" {
			specs = []string{plan}
		}
		if plan == "sync" {
			ranks = []int{0, 1} // rank 1's Send of the wrong tag blocks as well
		}
		fs := replayUnder(t, tr, 4, specs...)
		if len(fs) != 1 {
			t.Fatalf("under %q: %s, want one hang", plan, kinds(fs))
		}
		f := wantFinding(t, fs, "hang", "program", ranks, s.line("poll-livelock", "test"))
		if !strings.Contains(f.Message, "rank 0 polls (Test) Irecv from rank 1 tag 3 (64 bytes); rank 1 ") {
			t.Errorf("under %q: message %q", plan, f.Message)
		}
		if len(f.Candidates) == 0 || !strings.Contains(f.Candidates[0], "rank 1 sent tag 2 to rank 0") {
			t.Errorf("under %q: candidates %q", plan, f.Candidates)
		}
	}
	// A replay that allows more polls than the record holds reaches the end
	// of rank 0's record while it polls: it polls on (no Finalize with the
	// Irecv still active: no missing-wait), and the verdict is the same.
	cfg := tr.Config()
	cfg.PollLimit = 1 << 30
	fs, err := replay.Explore(tr.Open, cfg, tr.Site, nil, 0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 {
		t.Fatalf("with a poll limit above the recorded polls: %s, want one hang", kinds(fs))
	}
	wantFinding(t, fs, "hang", "program", []int{0}, s.line("poll-livelock", "test"))
	fixed := s.record("poll-livelock", "-fixed")
	for _, plan := range []string{"", "sync", "delay"} {
		var specs []string
		if plan != "" {
			specs = []string{plan}
		}
		wantClean(t, replayUnder(t, fixed, 4, specs...), plan)
	}
}
