package faults

import (
	"reflect"
	"testing"
	"time"
)

// msgs is a deterministic stream of n messages over 4 ranks.
func msgs(n int) []Message {
	ops := Ops()
	out := make([]Message, n)
	seq := make([]uint64, 4)
	for i := range out {
		src := i % 4
		dst := (i/4 + src + 1) % 4
		if dst == src {
			dst = (dst + 1) % 4
		}
		out[i] = Message{Src: src, Dst: dst, Tag: i % 5, Op: ops[i%len(ops)], Bytes: 64, Seq: seq[src]}
		seq[src]++
	}
	return out
}

func mustParse(t testing.TB, ss ...string) []Spec {
	t.Helper()
	specs, err := ParseAll(ss)
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

func run(inj Injector, ms []Message) []Action {
	out := make([]Action, len(ms))
	for i, m := range ms {
		out[i] = inj.Message(m)
	}
	return out
}

func TestPlanDeterminism(t *testing.T) {
	ms := msgs(2000)
	specs := mustParse(t, "delay", "drop:p=0.01,nth=all")
	a1 := run(NewPlan(specs, 7), ms)
	a2 := run(NewPlan(specs, 7), ms)
	if !reflect.DeepEqual(a1, a2) {
		t.Fatal("same seed, different actions")
	}
	p1, p2 := NewPlan(specs, 7), NewPlan(specs, 7)
	run(p1, ms)
	run(p2, ms)
	if !reflect.DeepEqual(p1.Injections(), p2.Injections()) {
		t.Fatal("same seed, different injections")
	}
	if a3 := run(NewPlan(specs, 8), ms); reflect.DeepEqual(a1, a3) {
		t.Fatal("different seeds, same actions")
	}
}

func TestPlanAppendingSpecKeepsDecisions(t *testing.T) {
	ms := msgs(1000)
	one := NewPlan(mustParse(t, "delay"), 3)
	two := NewPlan(mustParse(t, "delay", "delay:max=1ms,p=0.5", "drop:nth=all,p=0.1"), 3)
	run(one, ms)
	run(two, ms)
	var first []Injection
	for _, in := range two.Injections() {
		if in.Spec == 0 {
			first = append(first, in)
		}
	}
	if len(first) == 0 || !reflect.DeepEqual(first, one.Injections()) {
		t.Fatalf("spec 0's injections changed when specs were appended (%d vs %d)", len(first), len(one.Injections()))
	}
}

func TestPlanPAndAmountStreamsIndependent(t *testing.T) {
	// The amount of the k-th delayed message must not depend on how many
	// p-draws came before it: with p=1 and p=0.5 the amounts, in order, are
	// the same sequence.
	ms := msgs(500)
	all := NewPlan(mustParse(t, "delay:p=1"), 11)
	half := NewPlan(mustParse(t, "delay:p=0.5"), 11)
	run(all, ms)
	run(half, ms)
	hi := half.Injections()
	ai := all.Injections()
	if len(hi) == 0 || len(hi) >= len(ai) {
		t.Fatalf("p=0.5 made %d of %d", len(hi), len(ai))
	}
	for i := range hi {
		if hi[i].Delay != ai[i].Delay {
			t.Fatalf("delay %d: %v with p=0.5, %v with p=1", i, hi[i].Delay, ai[i].Delay)
		}
	}
}

func TestPlanProbability(t *testing.T) {
	ms := msgs(4000)
	for _, tt := range []struct {
		spec   string
		lo, hi int
	}{
		{"delay:p=0", 0, 0},
		{"delay:p=1", 4000, 4000},
		{"delay", 1800, 2200},
		{"delay:p=0.1", 300, 500},
		{"drop:nth=all,p=1", 4000, 4000},
		{"drop:nth=all,p=0", 0, 0},
	} {
		p := NewPlan(mustParse(t, tt.spec), 1)
		run(p, ms)
		if n := len(p.Injections()); n < tt.lo || n > tt.hi {
			t.Errorf("%s: %d injections, want [%d, %d]", tt.spec, n, tt.lo, tt.hi)
		}
	}
}

func TestPlanDelayAmounts(t *testing.T) {
	ms := msgs(2000)
	p := NewPlan(mustParse(t, "delay:p=1"), 5)
	var sawLow, sawHigh bool
	for _, a := range run(p, ms) {
		if a.Delay < 0 || a.Delay > DefaultMaxDelay || a.Drop {
			t.Fatalf("action %+v outside default range", a)
		}
		sawLow = sawLow || a.Delay < 20*time.Microsecond
		sawHigh = sawHigh || a.Delay > 180*time.Microsecond
	}
	if !sawLow || !sawHigh {
		t.Error("default delays do not span [0, 200us]")
	}
	p = NewPlan(mustParse(t, "delay:p=1,min=1ms,max=2ms"), 5)
	for _, a := range run(p, ms) {
		if a.Delay < time.Millisecond || a.Delay > 2*time.Millisecond {
			t.Fatalf("delay %v outside [1ms, 2ms]", a.Delay)
		}
	}
	p = NewPlan(mustParse(t, "delay:d=5ms"), 5)
	for _, a := range run(p, ms) {
		if a.Delay != 0 && a.Delay != 5*time.Millisecond {
			t.Fatalf("fixed delay %v", a.Delay)
		}
	}
	p = NewPlan(mustParse(t, "delay:p=1,min=0s,max=2562047h47m16.854775807s"), 5)
	run(p, ms[:10]) // full int64 range must not overflow or panic
}

func TestPlanSelectors(t *testing.T) {
	ms := msgs(400)
	for _, tt := range []struct {
		spec string
		want func(Message) bool
	}{
		{"delay:rank=2", func(m Message) bool { return m.Src == 2 || m.Dst == 2 }},
		{"delay:src=1", func(m Message) bool { return m.Src == 1 }},
		{"delay:dst=3", func(m Message) bool { return m.Dst == 3 }},
		{"delay:tag=4", func(m Message) bool { return m.Tag == 4 }},
		{"delay:op=isend", func(m Message) bool { return m.Op == "Isend" }},
		{"delay:op=StreamSend", func(m Message) bool { return m.Op == "Stream.Send" }},
		{"drop:src=0,dst=1,nth=all", func(m Message) bool { return m.Src == 0 && m.Dst == 1 }},
		{"drop:rank=0,tag=4,op=Isend,nth=all", func(m Message) bool {
			return (m.Src == 0 || m.Dst == 0) && m.Tag == 4 && m.Op == "Isend"
		}},
	} {
		p := NewPlan(mustParse(t, tt.spec), 9)
		acts := run(p, ms)
		n := 0
		for i, m := range ms {
			hit := containsMsg(p.Injections(), m)
			if hit != (acts[i].Delay > 0 || acts[i].Drop) && acts[i].Delay != 0 {
				t.Fatalf("%s: action %+v disagrees with injections", tt.spec, acts[i])
			}
			if hit != tt.want(m) {
				t.Fatalf("%s: message %+v hit=%v", tt.spec, m, hit)
			}
			if hit {
				n++
			}
		}
		if n == 0 {
			t.Fatalf("%s selected nothing", tt.spec)
		}
	}
}

func containsMsg(inj []Injection, m Message) bool {
	for _, in := range inj {
		if in.Src == m.Src && in.Dst == m.Dst && in.Seq == m.Seq {
			return true
		}
	}
	return false
}

func TestPlanNth(t *testing.T) {
	ms := msgs(400)
	// bare drop: the very first message of the run.
	p := NewPlan(mustParse(t, "drop"), 1)
	acts := run(p, ms)
	if !acts[0].Drop {
		t.Fatal("bare drop did not drop the first message")
	}
	if inj := p.Injections(); len(inj) != 1 || inj[0].Seq != ms[0].Seq || inj[0].Src != ms[0].Src {
		t.Fatalf("bare drop injections: %v", inj)
	}
	// nth counts matches of the other selectors, per spec.
	p = NewPlan(mustParse(t, "drop:src=1,tag=1,nth=3", "delay:src=1,tag=1,nth=2,d=1ms", "drop:src=1,tag=1"), 1)
	acts = run(p, ms)
	var matching []int
	for i, m := range ms {
		if m.Src == 1 && m.Tag == 1 {
			matching = append(matching, i)
		}
	}
	if len(matching) < 4 {
		t.Fatal("test stream too short")
	}
	for i, a := range acts {
		switch i {
		case matching[0]:
			if !a.Drop {
				t.Errorf("1st match not dropped by spec 2")
			}
		case matching[1]:
			if a.Drop || a.Delay != time.Millisecond {
				t.Errorf("2nd match: %+v, want delay 1ms", a)
			}
		case matching[2]:
			if !a.Drop {
				t.Errorf("3rd match not dropped")
			}
		default:
			if a != (Action{}) {
				t.Errorf("message %d: %+v", i, a)
			}
		}
	}
	got := p.Injections()
	want := []Injection{
		{Spec: 2, Kind: Drop, Src: 1, Dst: ms[matching[0]].Dst, Tag: 1, Op: ms[matching[0]].Op, Seq: ms[matching[0]].Seq, Drop: true},
		{Spec: 1, Kind: Delay, Src: 1, Dst: ms[matching[1]].Dst, Tag: 1, Op: ms[matching[1]].Op, Seq: ms[matching[1]].Seq, Delay: time.Millisecond},
		{Spec: 0, Kind: Drop, Src: 1, Dst: ms[matching[2]].Dst, Tag: 1, Op: ms[matching[2]].Op, Seq: ms[matching[2]].Seq, Drop: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("injections\n got %v\nwant %v", got, want)
	}
}

func TestPlanDelaysAddAndDropWins(t *testing.T) {
	m := Message{Src: 0, Dst: 1, Tag: 3, Op: "Isend", Seq: 4}
	p := NewPlan(mustParse(t, "delay:d=1ms,p=1", "delay:d=2ms,p=1"), 0)
	if a := p.Message(m); a != (Action{Delay: 3 * time.Millisecond}) {
		t.Fatalf("delays do not add: %+v", a)
	}
	p = NewPlan(mustParse(t, "delay:d=1ms,p=1", "drop", "delay:d=2ms,p=1"), 0)
	if a := p.Message(m); a != (Action{Drop: true}) {
		t.Fatalf("drop does not win: %+v", a)
	}
	if n := len(p.Injections()); n != 3 {
		t.Fatalf("%d injections, want 3", n)
	}
}

func TestPlanSwitches(t *testing.T) {
	p := NewPlan(mustParse(t, "delay"), 0)
	if p.Sync() || p.Mutate() || p.Scribble() {
		t.Fatal("delay plan has switches on")
	}
	p = NewPlan(mustParse(t, "sync", "mutate:scribble=true"), 0)
	if !p.Sync() || !p.Mutate() || !p.Scribble() {
		t.Fatal("switches off")
	}
	if a := p.Message(Message{}); a != (Action{}) {
		t.Fatalf("sync/mutate act on messages: %+v", a)
	}
	if p.Seed() != 0 || !reflect.DeepEqual(p.Specs(), mustParse(t, "sync", "mutate:scribble=true")) {
		t.Fatal("Seed/Specs")
	}
	var n Injector = NoFaults()
	if n.Sync() || n.Mutate() || n.Message(Message{Src: 1}) != (Action{}) {
		t.Fatal("NoFaults injects")
	}
	if len(NewPlan(nil, 1).Injections()) != 0 {
		t.Fatal("empty plan")
	}
}

func TestInjectionString(t *testing.T) {
	for _, tt := range []struct {
		in   Injection
		want string
	}{
		{Injection{Kind: Delay, Src: 0, Dst: 1, Tag: 3, Op: "Isend", Seq: 4, Delay: 37 * time.Microsecond}, "delay 37us on rank 0 -> 1 tag 3 (Isend seq 4)"},
		{Injection{Kind: Delay, Src: 2, Dst: 0, Tag: 0, Op: "Send", Seq: 0, Delay: 1500 * time.Microsecond}, "delay 1.5ms on rank 2 -> 0 tag 0 (Send seq 0)"},
		{Injection{Kind: Drop, Src: 0, Dst: 1, Tag: 3, Op: "Stream.Send", Seq: 9, Drop: true}, "drop on rank 0 -> 1 tag 3 (Stream.Send seq 9)"},
		{Injection{Kind: Drop, Src: 0, Dst: 1, Seq: 9, Drop: true}, "drop on rank 0 -> 1 tag 0 (seq 9)"},
	} {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestFixedReplaysPlan(t *testing.T) {
	ms := msgs(3000)
	specs := mustParse(t, "delay", "delay:rank=1,max=5ms,p=0.3", "drop:nth=all,p=0.02", "sync")
	p := NewPlan(specs, 42)
	want := run(p, ms)
	inj := p.Injections()
	f := Fixed(p.Sync(), p.Mutate(), inj)
	if !f.Sync() || f.Mutate() {
		t.Fatal("Fixed switches")
	}
	if got := run(f, ms); !reflect.DeepEqual(got, want) {
		t.Fatal("Fixed(all injections) differs from the plan")
	}
	// Order of the engine's questions does not matter to Fixed.
	rev := make([]Message, len(ms))
	for i, m := range ms {
		rev[len(ms)-1-i] = m
	}
	got := run(f, rev)
	for i := range got {
		if got[i] != want[len(ms)-1-i] {
			t.Fatal("Fixed depends on message order")
		}
	}
}

func TestFixedSubset(t *testing.T) {
	ms := msgs(1000)
	p := NewPlan(mustParse(t, "delay", "drop:nth=all,p=0.05"), 99)
	run(p, ms)
	inj := p.Injections()
	var sub []Injection
	for i, in := range inj {
		if i%3 == 0 {
			sub = append(sub, in)
		}
	}
	f := Fixed(false, false, sub)
	acts := run(f, ms)
	for i, m := range ms {
		var want Action
		for _, in := range sub {
			if in.Src == m.Src && in.Dst == m.Dst && in.Seq == m.Seq {
				want = want.add(in)
			}
		}
		if acts[i] != want {
			t.Fatalf("message %d: %+v, want %+v", i, acts[i], want)
		}
	}
	if a := Fixed(false, true, nil); !a.Mutate() || a.Message(ms[0]) != (Action{}) {
		t.Fatal("empty Fixed")
	}
}

func BenchmarkPlanMessage(b *testing.B) {
	ms := msgs(1024)
	p := NewPlan(mustParse(b, "delay", "drop:src=1,dst=2,tag=3,nth=5"), 1)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Message(ms[i%len(ms)])
	}
}

// TestPlanKeepsAtMostMaxKept: past MaxKept injections a plan counts but
// keeps no more; its decisions are the same as ever (two plans agree), and
// the kept ones replay through Fixed exactly as the plan decided.
func TestPlanKeepsAtMostMaxKept(t *testing.T) {
	ms := msgs(3 * MaxKept)
	specs := mustParse(t, "delay:p=1", "drop:nth=all,p=0.01")
	p1, p2 := NewPlan(specs, 5), NewPlan(specs, 5)
	a1, a2 := run(p1, ms), run(p2, ms)
	if !reflect.DeepEqual(a1, a2) {
		t.Fatal("same specs and seed, different decisions")
	}
	inj := p1.Injections()
	if len(inj) != MaxKept || p1.Complete() || p1.Count() < 3*MaxKept || p1.Drops() == 0 {
		t.Fatalf("kept %d, count %d, drops %d, complete %v", len(inj), p1.Count(), p1.Drops(), p1.Complete())
	}
	// Messages before the one of the last kept injection have all theirs kept.
	last := inj[len(inj)-1]
	j := 0
	for j < len(ms) && (ms[j].Src != last.Src || ms[j].Seq != last.Seq) {
		j++
	}
	if j < MaxKept/2 {
		t.Fatalf("the kept injections cover only %d messages", j)
	}
	f := Fixed(false, false, inj)
	for i, m := range ms[:j] {
		if got := f.Message(m); got != a1[i] {
			t.Fatalf("message %d: Fixed(kept) %+v, plan %+v", i, got, a1[i])
		}
	}
	small := NewPlan(specs, 5)
	run(small, ms[:100])
	if !small.Complete() || small.Count() != len(small.Injections()) {
		t.Fatalf("a small run's list is whole: count %d, kept %d", small.Count(), len(small.Injections()))
	}
}
