package replay_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// recordFile records fn on ranks ranks into a trace file, as p2ptrace
// record writes one, and returns its path.
func recordFile(t *testing.T, name string, ranks int, fn func(*gpu.Rank) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".db")
	w, err := trace.Create(path, trace.Header{Command: []string{name}}, trace.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	status := trace.StatusComplete
	if err := gpu.Launch(ranks, fn, gpu.RecordTo(w), gpu.RecordPayloads()); err != nil {
		status = trace.StatusHung
	}
	if err := w.Close(status, ""); err != nil {
		t.Fatal(err)
	}
	return path
}

// isendMutate writes the buffer of an Isend before waiting for it (a
// rendezvous send: bigger than the eager limit).
func isendMutate(r *gpu.Rank) error {
	b := r.Alloc(gpu.Float32, 1<<15)
	if r.ID() == 0 {
		for i := range 3 {
			q, err := r.Isend(b, 1, i)
			if err != nil {
				return err
			}
			b.Float32s()[3] = float32(7 + i) // the in-flight write
			if _, err := r.Wait(q); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range 3 {
		if _, err := r.Recv(b, 0, i); err != nil {
			return err
		}
	}
	return nil
}

// gather: rank 0 receives from AnySource once per other rank, twice over:
// every receive has alternatives, so a check runs dozens of forced replays.
func gather(r *gpu.Rank) error {
	b := r.Alloc(gpu.Int32, 4)
	for round := range 2 {
		if r.ID() != 0 {
			if err := r.Compute(time.Duration(1000 * r.ID())); err != nil {
				return err
			}
			if err := r.Send(b, 0, round); err != nil {
				return err
			}
			continue
		}
		for range r.Size() - 1 {
			if _, err := r.Recv(b, gpu.AnySource, gpu.AnyTag); err != nil {
				return err
			}
		}
	}
	return nil
}

// ring: each rank Isends right and Irecvs left, then Waitalls.
func ring(r *gpu.Rank) error {
	s, d := r.Alloc(gpu.Float32, 1<<15), r.Alloc(gpu.Float32, 16)
	next, prev := (r.ID()+1)%r.Size(), (r.ID()+r.Size()-1)%r.Size()
	for it := range 4 {
		sq, err := r.Isend(s, next, it)
		if err != nil {
			return err
		}
		rq, err := r.Irecv(d, prev, it)
		if err != nil {
			return err
		}
		if err := r.Waitall(sq, rq); err != nil {
			return err
		}
	}
	return nil
}

// TestCheckTraceInParallelIsSequential: a check on several workers (each
// its own reader of the file) reports byte for byte what one worker does,
// and counts its progress up to the total one call at a time.
func TestCheckTraceInParallelIsSequential(t *testing.T) {
	cases := []struct {
		name  string
		ranks int
		fn    func(*gpu.Rank) error
		want  string // a kind the report must have ("" none)
	}{
		{"headtohead", 2, headToHead(16), "deadlock"},
		{"isend-mutate", 2, isendMutate, "corrupted-data"},
		{"gather", 6, gather, "message-race"},
		{"ring", 8, ring, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := recordFile(t, c.name, c.ranks, c.fn)
			check := func(workers int) string {
				tr, err := replay.OpenTrace(path)
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				var mu sync.Mutex
				last, calls := 0, 0
				progress := func(done, total int) {
					mu.Lock()
					defer mu.Unlock()
					if done != last+1 || done > total {
						t.Errorf("workers %d: progress %d/%d after %d", workers, done, total, last)
					}
					last, calls = done, total
				}
				rep, err := replay.CheckTrace(tr, replay.CheckOptions{Workers: workers, Strict: true, NoRerun: "a test", Progress: progress})
				if err != nil {
					t.Fatal(err)
				}
				if last != calls || last < replay.DelaySeeds+3 {
					t.Errorf("workers %d: progress ended at %d of %d", workers, last, calls)
				}
				js, err := rep.JSON()
				if err != nil {
					t.Fatal(err)
				}
				return rep.Text() + "\n" + string(js)
			}
			seq := check(1)
			if c.want != "" && !contains(seq, `"kind": "`+c.want+`"`) {
				t.Fatalf("the sequential check has no %s:\n%s", c.want, seq)
			}
			for _, workers := range []int{2, 5} {
				if par := check(workers); par != seq {
					t.Fatalf("%d workers:\n%s\n--- one worker:\n%s", workers, par, seq)
				}
			}
		})
	}
}

// TestExploreInParallelIsSequential: replay --explore on several workers
// (Trace.Explore) finds what replay.Explore finds one seed after another:
// the same findings, in the same order, each with its first seed.
func TestExploreInParallelIsSequential(t *testing.T) {
	cases := []struct {
		name  string
		ranks int
		fn    func(*gpu.Rank) error
		fault string
		want  string // a kind the findings must have
	}{
		{"gather", 6, gather, "delay", "message-race"},
		{"isend-mutate", 2, isendMutate, "mutate", "corrupted-data"},
		{"headtohead", 2, headToHead(16), "sync", "deadlock"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := replay.OpenTrace(recordFile(t, c.name, c.ranks, c.fn))
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			specs, err := faults.ParseAll([]string{c.fault})
			if err != nil {
				t.Fatal(err)
			}
			const first, seeds = 3, 12
			text := func(fs []replay.Finding) string {
				js, err := (&replay.Report{Findings: fs}).JSON()
				if err != nil {
					t.Fatal(err)
				}
				return string(js)
			}
			// The oracle: one replay after another, deduplicated as found.
			var seq verdict.Set
			for seed := uint64(first); seed < first+seeds; seed++ {
				fs, err := replay.Run(tr.Open, tr.Config(), tr.Site, specs, seed)
				if err != nil {
					t.Fatal(err)
				}
				seq.Add(fs...)
			}
			want := text(seq.Findings())
			if !contains(want, `"kind": "`+c.want+`"`) {
				t.Fatalf("one seed after another: no %s:\n%s", c.want, want)
			}
			if got, err := replay.Explore(tr.Open, tr.Config(), tr.Site, specs, first, seeds, nil); err != nil || text(got) != want {
				t.Fatalf("replay.Explore: %v\n%s\n--- one seed after another:\n%s", err, text(got), want)
			}
			for _, workers := range []int{1, 3} {
				var mu sync.Mutex
				last := 0
				fs, err := tr.Explore(tr.Config(), specs, first, seeds, workers, func(done int) {
					mu.Lock()
					defer mu.Unlock()
					if done != last+1 {
						t.Errorf("workers %d: progress %d after %d", workers, done, last)
					}
					last = done
				})
				if err != nil {
					t.Fatal(err)
				}
				if got := text(fs); got != want {
					t.Fatalf("%d workers:\n%s\n--- one seed after another:\n%s", workers, got, want)
				}
				if last != seeds {
					t.Errorf("workers %d: progress ended at %d of %d", workers, last, seeds)
				}
			}
		})
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
