package harness_test

import (
	"flag"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/harness"
	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const large = 1 << 20

// The scenario patterns (as in testdata/train).

func pingpong(r *gpu.Rank) error {
	b := r.Alloc(gpu.Float32, large)
	if r.ID() == 0 {
		b.Float32s()[9] = 9
		if err := r.Send(b, 1, 0); err != nil {
			return err
		}
		_, err := r.Recv(b, 1, 0)
		return err
	}
	if _, err := r.Recv(b, 0, 0); err != nil {
		return err
	}
	if b.Float32s()[9] != 9 {
		return fmt.Errorf("rank 1 got %v, want 9", b.Float32s()[9])
	}
	return r.Send(b, 0, 0)
}

func sendrecvExchange(r *gpu.Rank) error {
	s, d := r.Alloc(gpu.Float32, 4096), r.Alloc(gpu.Float32, 4096)
	s.Float32s()[0] = float32(r.ID())
	if _, err := r.Sendrecv(s, 1-r.ID(), 0, d, 1-r.ID(), 0); err != nil {
		return err
	}
	if d.Float32s()[0] != float32(1-r.ID()) {
		return fmt.Errorf("rank %d got %v", r.ID(), d.Float32s()[0])
	}
	return nil
}

func ncclGroup(r *gpu.Rank) error {
	s, d := r.Alloc(gpu.Float32, 1024), r.Alloc(gpu.Float32, 1024)
	st := r.Stream()
	r.GroupStart()
	st.Send(s, 1-r.ID())
	st.Recv(d, 1-r.ID())
	r.GroupEnd()
	return st.Synchronize()
}

func headToHeadSmall(r *gpu.Rank) error {
	b := r.Alloc(gpu.Float32, 16)
	if err := r.Send(b, 1-r.ID(), 0); err != nil {
		return err
	}
	_, err := r.Recv(b, 1-r.ID(), 0)
	return err
}

// isendMutate writes its send buffer while the Isend is in flight; rank 1
// checks what arrived.
func isendMutate(r *gpu.Rank) error {
	b := r.Alloc(gpu.Float32, large)
	if r.ID() == 0 {
		if err := r.Compute(time.Millisecond); err != nil {
			return err
		}
		q, err := r.Isend(b, 1, 0)
		if err != nil {
			return err
		}
		b.Float32s()[5] = 55 // the bug: the request is still in flight
		_, err = r.Wait(q)
		return err
	}
	if _, err := r.Recv(b, 0, 0); err != nil {
		return err
	}
	if b.Float32s()[5] != 0 {
		return fmt.Errorf("rank 1: element 5 is %v, want 0", b.Float32s()[5])
	}
	return nil
}

func irecvReadEarly(r *gpu.Rank) error {
	b := r.Alloc(gpu.Float32, 8)
	if r.ID() == 0 {
		b.Float32s()[0] = 1
		return r.Send(b, 1, 0)
	}
	q, err := r.Irecv(b, 0, 0)
	if err != nil {
		return err
	}
	early := b.Float32s()[0] // the bug: read before Wait
	if _, err := r.Wait(q); err != nil {
		return err
	}
	if early != 1 {
		return fmt.Errorf("rank 1 read %v before Wait, want 1: a missing Wait", early)
	}
	return nil
}

func TestCleanPatternsPassSweeps(t *testing.T) {
	for name, fn := range map[string]func(*gpu.Rank) error{"pingpong": pingpong, "sendrecv-exchange": sendrecvExchange, "nccl-group": ncclGroup} {
		t.Run(name, func(t *testing.T) {
			fs := harness.Run(t, 2, fn, harness.Faults("sync"), harness.Faults("delay"), harness.Faults("mutate"), harness.Seeds(100))
			if len(fs) != 0 {
				t.Fatalf("%d failures", len(fs))
			}
		})
	}
}

func TestBadPatternsFailWithTheirFinding(t *testing.T) {
	cases := []struct {
		name   string
		fn     func(*gpu.Rank) error
		faults string
		want   verdict.Kind
	}{
		{"headtohead-small", headToHeadSmall, "sync", "deadlock"},
		{"isend-mutate", isendMutate, "mutate", verdict.RankError},
		{"isend-mutate-recorded", isendMutate, "", "in-flight-mutation"},
		{"irecv-read-early", irecvReadEarly, "delay:d=10us,p=1", verdict.RankError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := []harness.Option{harness.Seeds(3), harness.Expect(c.want)}
			if c.faults != "" {
				opts = append(opts, harness.Faults(c.faults))
			}
			harness.Run(t, 2, c.fn, opts...)
		})
	}
}

// captureTB records what a harness.Run reports instead of failing the test.
type captureTB struct {
	testing.TB
	errs []string
}

func (c *captureTB) Errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}
func (c *captureTB) Fatalf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}
func (c *captureTB) Helper() {}

var (
	seedRe   = regexp.MustCompile(`-p2ptrace\.seed=(\d+)`)
	replayRe = regexp.MustCompile(`p2ptrace replay --fault '([^']+)' --seed (\d+) (\S+)`)
)

func TestReproCommandsReproduce(t *testing.T) {
	tb := &captureTB{TB: t}
	fs := harness.Run(tb, 2, headToHeadSmall, harness.Faults("sync"), harness.Seeds(2))
	// The plain run passes; both sync seeds fail live; the check battery
	// of the plain run adds each rank's unsafe-buffering (its deadlock
	// under sync is the live runs' finding already).
	var live, checked []string
	for _, f := range fs {
		if f.Replay == "" {
			live = append(live, f.Kinds...)
		} else {
			checked = append(checked, f.Kinds...)
		}
	}
	if len(tb.errs) != 1 || !slices.Equal(live, []string{"deadlock", "deadlock"}) || !slices.Equal(checked, []string{"unsafe-buffering", "unsafe-buffering"}) {
		t.Fatalf("want one report of the sync failures, got %d reports, live %v, checked %v", len(tb.errs), live, checked)
	}
	msg := tb.errs[0]
	for _, want := range []string{"p2ptrace: seed 0 under sync failed (deadlock)", "wait-for cycle: rank 0 -> rank 1 -> rank 0", "harness_test.go:", "(3 other failing run(s))", "go test -run '^TestReproCommandsReproduce$' github.com/p2ptrace/p2ptrace/harness -p2ptrace.seed=0 -p2ptrace.fault='sync'"} {
		if !strings.Contains(msg, want) {
			t.Errorf("report lacks %q:\n%s", want, msg)
		}
	}
	// The go test line names the package, so it runs from the module root too.
	list := exec.Command("go", "list", "github.com/p2ptrace/p2ptrace/harness")
	list.Dir = ".."
	if out, err := list.CombinedOutput(); err != nil {
		t.Fatalf("the package of the go test line, from the module root: %v\n%s", err, out)
	}
	// The go test line: rerun that seed through the flags.
	m := seedRe.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("no seed in %s", msg)
	}
	setFlag(t, "p2ptrace.seed", m[1])
	setFlag(t, "p2ptrace.fault", "sync")
	again := &captureTB{TB: t}
	fs2 := harness.Run(again, 2, headToHeadSmall)
	if len(fs2) != 1 || fs2[0].Kinds[0] != "deadlock" || strconv.FormatUint(fs2[0].Seed, 10) != m[1] {
		t.Fatalf("rerun gave %+v", fs2)
	}
	// The replay line: the saved trace under the same fault and seed.
	rm := replayRe.FindStringSubmatch(msg)
	if rm == nil {
		t.Fatalf("no replay line in %s", msg)
	}
	tr, err := replay.OpenTrace(rm[3])
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	specs, err := faults.ParseAll([]string{rm[1]})
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := strconv.ParseUint(rm[2], 10, 64)
	found, err := replay.Run(tr.Open, tr.Config(), tr.Site, specs, seed)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 || found[0].Kind != "deadlock" || found[0].Ops[0].Site == "" || !strings.HasPrefix(found[0].Ops[0].Site, "harness/harness_test.go:") && !strings.HasPrefix(found[0].Ops[0].Site, "harness_test.go:") {
		t.Fatalf("replay of %s: %+v", rm[3], found)
	}
}

func setFlag(t *testing.T, name, value string) {
	t.Helper()
	old := flag.Lookup(name).Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set(name, old) })
}

func TestShrinkingFindsTheOneDrop(t *testing.T) {
	tb := &captureTB{TB: t}
	fs := harness.Run(tb, 2, pingpong, harness.Faults("drop:p=1,nth=all"), harness.Seeds(1))
	if len(fs) != 1 || len(fs[0].Minimal) != 1 || !fs[0].Minimal[0].Drop {
		t.Fatalf("failures %+v", fs)
	}
	if !strings.Contains(tb.errs[0], "minimal injections that still fail:\n  drop") {
		t.Fatalf("%s", tb.errs[0])
	}
}

// TestTooManyInjectionsAreNotShrunk: a failing run with more injections
// than a plan keeps reports their count instead of a minimal set.
func TestTooManyInjectionsAreNotShrunk(t *testing.T) {
	tb := &captureTB{TB: t}
	const n = faults.MaxKept + 100
	fs := harness.Run(tb, 2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 1)
		var slowest time.Duration
		for range n {
			if r.ID() == 0 {
				if err := r.Send(b, 1, 0); err != nil {
					return err
				}
				continue
			}
			t0 := r.Now()
			if _, err := r.Recv(b, 0, 0); err != nil {
				return err
			}
			slowest = max(slowest, r.Now()-t0)
		}
		if slowest > 50*time.Microsecond {
			return fmt.Errorf("rank %d: a message took %v", r.ID(), slowest) // only under delay
		}
		return nil
	}, harness.Faults("delay:p=1"), harness.Seeds(1))
	if len(fs) != 1 || fs[0].Minimal != nil || fs[0].Unshrunk != n {
		t.Fatalf("failures %+v", fs)
	}
	if want := fmt.Sprintf("not shrunk: %d injections, more than the %d a plan keeps", n, faults.MaxKept); !strings.Contains(tb.errs[0], want) {
		t.Fatalf("report lacks %q:\n%s", want, tb.errs[0])
	}
}

func TestFailingRunDoesNotAffectSiblings(t *testing.T) {
	var sibling bool
	t.Run("group", func(t *testing.T) {
		t.Run("bad", func(t *testing.T) {
			tb := &captureTB{TB: t}
			harness.Run(tb, 2, headToHeadSmall, harness.Faults("sync"), harness.Seeds(1))
			if len(tb.errs) == 0 {
				t.Fatal("the bad pattern passed")
			}
		})
		t.Run("good", func(t *testing.T) {
			harness.Run(t, 2, pingpong, harness.Faults("sync"), harness.Seeds(5))
			sibling = !t.Failed()
		})
	})
	if !sibling {
		t.Fatal("the sibling of a failing harness.Run failed")
	}
}

func TestPanicIsReportedAsThatRanksPanic(t *testing.T) {
	tb := &captureTB{TB: t}
	harness.Run(tb, 2, func(r *gpu.Rank) error {
		if r.ID() == 1 {
			panic("bad index")
		}
		return nil
	}, harness.Seeds(1))
	if len(tb.errs) != 1 || !strings.Contains(tb.errs[0], "[1] crash (cause: program)\n    rank 1 crashed: panic: bad index (at harness_test.go:") || !strings.Contains(tb.errs[0], "goroutine ") {
		t.Fatalf("%v", tb.errs)
	}
}

func TestEqualNamesFirstDifference(t *testing.T) {
	var got, want *gpu.Buffer
	err := gpu.Launch(1, func(r *gpu.Rank) error {
		got, want = r.Alloc(gpu.Float32, 100), r.Alloc(gpu.Float32, 100)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got.Float32s()[42] = 1.5
	tb := &captureTB{TB: t}
	if harness.Equal(tb, got, want) || len(tb.errs) != 1 {
		t.Fatal("Equal passed different buffers")
	}
	if !strings.HasPrefix(tb.errs[0], "buffers differ first at element 42: got 1.5, want 0 (1 of 100 elements differ)\nelements 38..46 (-want +got):") {
		t.Fatalf("%s", tb.errs[0])
	}
	if !harness.Equal(t, want, want) {
		t.Fatal("Equal failed equal buffers")
	}
}

func TestReplayOfStoredTrace(t *testing.T) {
	dir := t.TempDir()
	setFlag(t, "p2ptrace.dir", dir)
	tb := &captureTB{TB: t}
	fs := harness.Run(tb, 2, headToHeadSmall, harness.Faults("sync"), harness.Seeds(1))
	if len(fs) == 0 || fs[0].Replay != "" || fs[0].TracePath == "" {
		t.Fatalf("%+v", fs)
	}
	found := harness.Replay(t, fs[0].TracePath, harness.Faults("sync"), harness.Seeds(2), harness.Expect("deadlock", "unsafe-buffering"))
	if len(found) != 3 {
		t.Fatalf("findings %+v", found)
	}
}

func BenchmarkRunPingpong(b *testing.B) {
	for b.Loop() {
		harness.Run(b, 2, pingpong, harness.Seeds(1))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
}

func ring8(r *gpu.Rank) error {
	const n = 8
	s, d := r.Alloc(gpu.Float32, 256), r.Alloc(gpu.Float32, 256)
	for range 10 {
		qs, err := r.Isend(s, (r.ID()+1)%n, 0)
		if err != nil {
			return err
		}
		qr, err := r.Irecv(d, (r.ID()+n-1)%n, 0)
		if err != nil {
			return err
		}
		if err := r.Waitall(qs, qr); err != nil {
			return err
		}
	}
	return nil
}

func BenchmarkRunRing8(b *testing.B) {
	for b.Loop() {
		harness.Run(b, 8, ring8, harness.Seeds(1))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
}

// BenchmarkRunRing8Seeds: 16 seeds of one path cost one check battery.
func BenchmarkRunRing8Seeds(b *testing.B) {
	for b.Loop() {
		harness.Run(b, 8, ring8, harness.Seeds(16))
	}
	b.ReportMetric(16*float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
}

// BenchmarkRunRing8NoCheck: the live runs alone.
func BenchmarkRunRing8NoCheck(b *testing.B) {
	for b.Loop() {
		harness.Run(b, 8, ring8, harness.Seeds(1), harness.NoCheck())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
}

func TestScribbleRevealsReadBeforeWait(t *testing.T) {
	// The plain run hides the bug (the data has landed by the early read);
	// mutate:scribble=true fills pending receive buffers, so the program's
	// own check fails.
	early := func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 8)
		if r.ID() == 0 {
			return r.Send(b, 1, 0)
		}
		if err := r.Compute(time.Millisecond); err != nil {
			return err
		}
		q, err := r.Irecv(b, 0, 0)
		if err != nil {
			return err
		}
		if v := b.Float32s()[0]; v != 0 { // the bug: read before Wait
			return fmt.Errorf("rank 1 read %v before Wait", v)
		}
		_, err = r.Wait(q)
		return err
	}
	harness.Run(t, 2, early, harness.Seeds(3))
	harness.Run(t, 2, early, harness.Faults("mutate:scribble=true"), harness.Seeds(1), harness.Expect(verdict.RankError))
}

// anySourceAssumesOrder: rank 0 receives from any rank, assumes it was rank
// 1, and then receives from rank 2 by name. When rank 2 comes first, the
// second receive waits for a message rank 2 never sends.
func anySourceAssumesOrder(r *gpu.Rank) error {
	b := r.Alloc(gpu.Int32, 1)
	if r.ID() == 0 {
		if _, err := r.Recv(b, gpu.AnySource, 0); err != nil { // culprit: any
			return err
		}
		_, err := r.Recv(b, 2, 0) // culprit: from-2
		return err
	}
	return r.Send(b, 0, 0) // culprit: send
}

// TestAnySourceOrderAssumedIsMessageRace: the live runs see one order per
// seed (a hang, or a clean run); the check battery of the clean run forces
// the other sender first and names the race.
func TestAnySourceOrderAssumedIsMessageRace(t *testing.T) {
	tb := &captureTB{TB: t}
	fs := harness.Run(tb, 3, anySourceAssumesOrder, harness.Seeds(8), harness.Expect("message-race"))
	if len(tb.errs) != 0 {
		t.Fatalf("%v", tb.errs)
	}
	any := fmt.Sprintf("harness_test.go:%d", scenariotest.MarkerLine(t, "harness_test.go", "any"))
	for _, f := range fs {
		for _, fd := range f.Findings {
			if fd.Kind == verdict.MessageRace {
				if fd.Ranks[0] != 0 || len(fd.Ops) == 0 || fd.Ops[0].Site != any || f.Replay == "" {
					t.Fatalf("message-race %+v (under %q), want rank 0's receive at %s, found by the check battery", fd, f.Replay, any)
				}
				return
			}
		}
	}
	t.Fatalf("no message-race in %+v", fs)
}

// anySourceAssumesData: rank 0 receives twice from any rank and assumes the
// first message is rank 1's. The calls are the same in either order (the
// model replay of the other order is clean); only the data differs.
func anySourceAssumesData(r *gpu.Rank) error {
	b := r.Alloc(gpu.Int32, 1)
	if r.ID() == 0 {
		var got []int32
		for range 2 {
			if _, err := r.Recv(b, gpu.AnySource, 0); err != nil { // culprit: recv-data
				return err
			}
			got = append(got, b.Int32s()[0])
		}
		if got[0] != 1 {
			return fmt.Errorf("rank 0: first message %d, want rank 1's", got[0])
		}
		return nil
	}
	b.Int32s()[0] = int32(r.ID())
	return r.Send(b, 0, 0)
}

// anySourceEitherOrder: the same exchange, correct whatever the order.
func anySourceEitherOrder(r *gpu.Rank) error {
	b := r.Alloc(gpu.Int32, 1)
	if r.ID() == 0 {
		for range 2 {
			st, err := r.Recv(b, gpu.AnySource, 0)
			if err != nil {
				return err
			}
			if int(b.Int32s()[0]) != st.Source {
				return fmt.Errorf("rank 0: rank %d's message says %d", st.Source, b.Int32s()[0])
			}
		}
		return nil
	}
	b.Int32s()[0] = int32(r.ID())
	return r.Send(b, 0, 0)
}

// TestRaceJudgedByRerunningTheProgram: a race whose other order replays
// cleanly in the model is judged by re-running the function with that match
// forced: the program's own check fails, so it is a message-race with the
// evidence; the correct version is no finding at all.
func TestRaceJudgedByRerunningTheProgram(t *testing.T) {
	tb := &captureTB{TB: t}
	fs := harness.Run(tb, 3, anySourceAssumesData, harness.Seeds(1))
	line := fmt.Sprintf("harness_test.go:%d", scenariotest.MarkerLine(t, "harness_test.go", "recv-data"))
	var race *verdict.Finding
	for _, f := range fs {
		for i := range f.Findings {
			if f.Findings[i].Kind == verdict.MessageRace {
				race = &f.Findings[i]
			}
		}
	}
	if race == nil || race.Ops[0].Site != line || race.Ranks[0] != 0 ||
		!strings.Contains(race.Message, "re-run with this match forced, the program failed: rank-error: rank 0 returned an error: rank 0: first message 2, want rank 1's") {
		t.Fatalf("want a message-race at %s with the re-run's evidence; got %+v\n%v", line, fs, tb.errs)
	}
	if len(tb.errs) != 1 || !strings.Contains(tb.errs[0], "message-race") {
		t.Fatalf("the test must fail with the race: %v", tb.errs)
	}

	clean := &captureTB{TB: t}
	if fs := harness.Run(clean, 3, anySourceEitherOrder, harness.Seeds(4)); len(fs) != 0 || len(clean.errs) != 0 {
		t.Fatalf("a correct AnySource exchange has failures: %+v %v", fs, clean.errs)
	}
}
