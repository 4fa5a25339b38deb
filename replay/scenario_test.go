package replay_test

import (
	"fmt"
	"testing"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/replay"
)

type syncOnly struct{}

func (syncOnly) Sync() bool                           { return true }
func (syncOnly) Mutate() bool                         { return false }
func (syncOnly) Message(faults.Message) faults.Action { return faults.Action{} }

type mutateOnly struct{}

func (mutateOnly) Sync() bool                           { return false }
func (mutateOnly) Mutate() bool                         { return true }
func (mutateOnly) Message(faults.Message) faults.Action { return faults.Action{} }

type dropFirst struct{ n int }

func (*dropFirst) Sync() bool   { return false }
func (*dropFirst) Mutate() bool { return false }
func (d *dropFirst) Message(faults.Message) faults.Action {
	d.n++
	return faults.Action{Drop: d.n == 1}
}

func record(t *testing.T, ranks int, fn func(r *gpu.Rank) error) (*replay.Collector, replay.Events) {
	t.Helper()
	c := replay.NewCollector()
	if err := gpu.Launch(ranks, fn, gpu.RecordTo(c)); err != nil {
		t.Logf("recorded run: %v", err)
	}
	return c, c.Events(ranks)
}

func headToHead(count int) func(r *gpu.Rank) error {
	return func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, count)
		if err := r.Send(b, 1-r.ID(), 0); err != nil {
			return err
		}
		_, err := r.Recv(b, 1-r.ID(), 0)
		return err
	}
}

func kinds(fs []replay.Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, string(f.Kind)+"/"+f.Cause)
	}
	return fmt.Sprint(s)
}

func TestReplayAsRecordedIsClean(t *testing.T) {
	c, ev := record(t, 2, headToHead(16))
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if fs := replay.Explain(out, c.Site, "", false, ""); len(fs) != 0 {
		t.Fatalf("findings %s", kinds(fs))
	}
}

func TestSyncDeadlockIsTheProgramsUnsafeBuffering(t *testing.T) {
	c, ev := record(t, 2, headToHead(16))
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10, Faults: syncOnly{}})
	if err != nil {
		t.Fatal(err)
	}
	fs := replay.Explain(out, c.Site, "sync", true, "")
	if got, want := kinds(fs), "[deadlock/program unsafe-buffering/program unsafe-buffering/program]"; got != want {
		t.Fatalf("findings %s, want %s", got, want)
	}
	if fs[0].Ops[0].Site == "" || fs[0].Ops[0].Op != "Send" || fs[1].Ops[0].Rank == fs[2].Ops[0].Rank {
		t.Fatalf("ops %+v %+v %+v", fs[0].Ops, fs[1].Ops, fs[2].Ops)
	}
}

func TestDropHangIsTheFaults(t *testing.T) {
	c, ev := record(t, 2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 4)
		if r.ID() == 0 {
			return r.Send(b, 1, 0)
		}
		_, err := r.Recv(b, 0, 0)
		return err
	})
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10, Faults: &dropFirst{}})
	if err != nil {
		t.Fatal(err)
	}
	fs := replay.Explain(out, c.Site, "drop", false, "drop on rank 0 -> 1 tag 0 (Send seq 0)")
	if got := kinds(fs); got != "[hang/fault]" {
		t.Fatalf("findings %s", got)
	}
}

func TestMutateCorruptsInFlightIsend(t *testing.T) {
	c, ev := record(t, 2, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Float32, 1<<20)
		if r.ID() == 0 {
			if err := r.Compute(1000); err != nil {
				return err
			}
			q, err := r.Isend(b, 1, 0)
			if err != nil {
				return err
			}
			b.Float32s()[3] = 7 // the in-flight write
			_, err = r.Wait(q)
			return err
		}
		_, err := r.Recv(b, 0, 0)
		return err
	})
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10, Faults: mutateOnly{}})
	if err != nil {
		t.Fatal(err)
	}
	fs := replay.Explain(out, c.Site, "mutate", false, "")
	if got := kinds(fs); got != "[corrupted-data/program]" {
		t.Fatalf("findings %s", got)
	}
	if fs[0].Ranks[0] != 1 || fs[0].Ops[1].Op != "Isend" {
		t.Fatalf("%+v", fs[0])
	}
}

type delayFrom struct{ src int }

func (delayFrom) Sync() bool   { return false }
func (delayFrom) Mutate() bool { return false }
func (d delayFrom) Message(m faults.Message) faults.Action {
	if m.Src == d.src {
		return faults.Action{Delay: 50_000}
	}
	return faults.Action{}
}

func TestDelayRevealsMessageRace(t *testing.T) {
	c, ev := record(t, 3, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 1)
		if r.ID() != 0 {
			if r.ID() == 2 {
				if err := r.Compute(1000); err != nil { // rank 1 comes first when recorded
					return err
				}
			}
			return r.Send(b, 0, 0)
		}
		for range 2 {
			if _, err := r.Recv(b, gpu.AnySource, 0); err != nil {
				return err
			}
		}
		return nil
	})
	out, err := replay.Replay(ev.Source(), replay.Config{EagerLimit: 64 << 10, Faults: delayFrom{src: 1}})
	if err != nil {
		t.Fatal(err)
	}
	fs := replay.Explain(out, c.Site, "delay", false, "")
	if got := kinds(fs); got != "[message-race/program message-race/program]" {
		t.Fatalf("findings %s", got)
	}
	if fs[0].Ranks[0] != 0 || fs[0].Ranks[1] != 1 || fs[0].Ranks[2] != 2 {
		t.Fatalf("ranks %v: want receiver 0, recorded sender 1, replayed sender 2", fs[0].Ranks)
	}
}

func TestCheckBatteryFindsLatentBugs(t *testing.T) {
	c, ev := record(t, 2, headToHead(16))
	open := func() (replay.Source, error) { return ev.Source(), nil }
	res, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs := res.Findings
	if got := kinds(fs); got != "[deadlock/program unsafe-buffering/program unsafe-buffering/program]" {
		t.Fatalf("findings %s", got)
	}
	if fs[0].RevealedBy != "sync" || fs[0].Fault != "" {
		t.Fatalf("revealed by %q, fault %q", fs[0].RevealedBy, fs[0].Fault)
	}
}

func TestCheckOfCleanProgramIsClean(t *testing.T) {
	c, ev := record(t, 2, func(r *gpu.Rank) error {
		s, d := r.Alloc(gpu.Float32, 1<<20), r.Alloc(gpu.Float32, 1<<20)
		_, err := r.Sendrecv(s, 1-r.ID(), 0, d, 1-r.ID(), 0)
		return err
	})
	open := func() (replay.Source, error) { return ev.Source(), nil }
	res, err := replay.Check(open, replay.Config{EagerLimit: 64 << 10}, c.Site, replay.CheckOptions{})
	if err != nil || len(res.Findings) != 0 {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestReportsAreDeterministic(t *testing.T) {
	c, ev := record(t, 3, func(r *gpu.Rank) error {
		b := r.Alloc(gpu.Int32, 1)
		if r.ID() != 0 {
			return r.Send(b, 0, r.ID())
		}
		for range 2 {
			if _, err := r.Recv(b, gpu.AnySource, gpu.AnyTag); err != nil {
				return err
			}
		}
		return nil
	})
	open := func() (replay.Source, error) { return ev.Source(), nil }
	specs, err := faults.ParseAll([]string{"delay"})
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for i := range 20 {
		fs, err := replay.Explore(open, replay.Config{EagerLimit: 64 << 10}, c.Site, specs, 0, 16, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep := replay.Report{Findings: fs}
		js, _ := rep.JSON()
		out := rep.Text() + string(js)
		if i == 0 {
			first = out
			if len(fs) == 0 {
				t.Fatal("16 delay seeds found no race")
			}
		} else if out != first {
			t.Fatalf("run %d differs:\n%s\n---\n%s", i, out, first)
		}
	}
}
