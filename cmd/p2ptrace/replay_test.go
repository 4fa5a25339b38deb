package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// recordInProcess records fn into a trace file, as `p2ptrace record` would.
func recordInProcess(t *testing.T, name string, ranks int, fn func(*gpu.Rank) error, opts ...gpu.Option) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".db")
	w, err := trace.Create(path, trace.Header{Command: []string{name}}, trace.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	runErr := gpu.Launch(ranks, fn, append([]gpu.Option{gpu.RecordTo(w)}, opts...)...)
	status := trace.StatusComplete
	if runErr != nil {
		status = trace.StatusHung
	}
	if err := w.Close(status, ""); err != nil {
		t.Fatal(err)
	}
	return path
}

func headToHeadSmall(r *gpu.Rank) error {
	b := r.Alloc(gpu.Float32, 16)
	if err := r.Send(b, 1-r.ID(), 0); err != nil {
		return err
	}
	_, err := r.Recv(b, 1-r.ID(), 0)
	return err
}

func anySourceRace(r *gpu.Rank) error {
	b := r.Alloc(gpu.Int32, 1)
	if r.ID() != 0 {
		return r.Send(b, 0, 0)
	}
	for range 2 {
		if _, err := r.Recv(b, gpu.AnySource, 0); err != nil {
			return err
		}
	}
	return nil
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

func TestReplayUnderSyncGolden(t *testing.T) {
	path := recordInProcess(t, "headtohead-small", 2, headToHeadSmall)
	code, out, errs := runCmd(t, "replay", "--fault", "sync", path)
	if code != 1 || errs != "p2ptrace: 3 finding(s)\n" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	golden(t, "replay-sync.golden", out)
	code, out, _ = runCmd(t, "replay", path)
	if code != 0 || out != "no findings\n" {
		t.Fatalf("as recorded: exit %d:\n%s", code, out)
	}
}

func TestCheckJSONGolden(t *testing.T) {
	path := recordInProcess(t, "headtohead-small", 2, headToHeadSmall)
	code, out, _ := runCmd(t, "check", "--json", path)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"kind", "ranks", "ops", "cause", "message", "hint"} {
		if _, ok := doc.Findings[0][key]; !ok {
			t.Errorf("finding lacks %q", key)
		}
	}
	golden(t, "check.golden.json", out)
}

func TestReplayIsDeterministic(t *testing.T) {
	path := recordInProcess(t, "anysource-race", 3, anySourceRace)
	var first string
	for i := range 5 {
		code, out, _ := runCmd(t, "replay", "--fault", "delay", "--explore", "20", "--json", path)
		if code != 1 || !strings.Contains(out, `"kind": "message-race"`) {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		if i == 0 {
			first = out
		} else if out != first {
			t.Fatalf("run %d printed other bytes", i)
		}
	}
}

func TestReplayUsageAndInputErrors(t *testing.T) {
	path := recordInProcess(t, "headtohead-small", 2, headToHeadSmall)
	missing := filepath.Join(t.TempDir(), "missing.db")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--fault", "delya", path}, `p2ptrace: bad fault spec "delya": unknown kind "delya" (valid kinds: delay, drop, mutate, sync)` + "\n"},
		{[]string{"replay", "--fault", "delay:foo=1", path}, `p2ptrace: bad fault spec "delay:foo=1": unknown key "foo" for delay (valid keys: `},
		{[]string{"replay", "--explore", "-1", path}, "p2ptrace: --explore -1: want a positive number of seeds\n"},
		{[]string{"replay", "--force-match", "0:3", path}, `p2ptrace: --force-match: forced match "0:3": want RANK:SEQ=SRC, e.g. 0:3=2`},
		{[]string{"replay"}, "p2ptrace: p2ptrace replay: want one trace file, got 0 arguments\n"},
		{[]string{"replay", missing}, "p2ptrace: "},
		{[]string{"check", missing}, "p2ptrace: "},
		{[]string{"record"}, "p2ptrace: p2ptrace record: want PROGRAM [ARGS...]\n"},
		{[]string{"record", "-o", filepath.Join(t.TempDir(), "x.db"), "./no/such/program"}, "p2ptrace: usage: no such program: ./no/such/program\n"},
		{[]string{"record", "--hash", "md5", "/bin/true"}, "p2ptrace: usage: --hash \"md5\": want full, sample or off\n"},
	}
	for _, c := range cases {
		code, _, errs := runCmd(t, c.args...)
		if code != 2 || !strings.HasPrefix(errs, c.want) || strings.Contains(errs, "goroutine ") {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
}

func wrongTag(r *gpu.Rank) error {
	b := r.Alloc(gpu.Float32, 16)
	if r.ID() == 0 {
		return r.Send(b, 1, 0)
	}
	_, err := r.Recv(b, 0, 1)
	return err
}

func isendMutate(r *gpu.Rank) error {
	b := r.Alloc(gpu.Float32, 1<<20)
	if r.ID() == 0 {
		if err := r.Compute(1000); err != nil {
			return err
		}
		q, err := r.Isend(b, 1, 0)
		if err != nil {
			return err
		}
		b.Float32s()[3] = 7
		_, err = r.Wait(q)
		return err
	}
	_, err := r.Recv(b, 0, 0)
	return err
}

// isendMutateSmall is isendMutate with 1024 floats, values 0..1023, and
// writes at elements 3 and 5 while in flight: recorded with an eager limit
// below its size and payloads on, a report shows its values.
func isendMutateSmall(r *gpu.Rank) error {
	b := r.Alloc(gpu.Float32, 1024)
	if r.ID() == 0 {
		for i := range b.Float32s() {
			b.Float32s()[i] = float32(i)
		}
		if err := r.Compute(1000); err != nil {
			return err
		}
		q, err := r.Isend(b, 1, 0)
		if err != nil {
			return err
		}
		b.Float32s()[3], b.Float32s()[5] = -1, 0.5
		_, err = r.Wait(q)
		return err
	}
	_, err := r.Recv(b, 0, 0)
	return err
}

func TestReplayReportsGolden(t *testing.T) {
	cases := []struct {
		name   string
		fn     func(*gpu.Rank) error
		args   []string
		golden string
		opts   []gpu.Option
	}{
		{"wrong-tag", wrongTag, nil, "replay-wrong-tag.golden", nil},
		{"isend-mutate", isendMutate, []string{"--fault", "mutate"}, "replay-isend-mutate.golden", nil},
		{"isend-mutate-values", isendMutateSmall, []string{"--fault", "mutate"}, "replay-isend-mutate-values.golden", []gpu.Option{gpu.EagerLimit(1024), gpu.RecordPayloads()}},
		{"isend-mutate-values-json", isendMutateSmall, []string{"--fault", "mutate", "--json"}, "replay-isend-mutate-values.golden.json", []gpu.Option{gpu.EagerLimit(1024), gpu.RecordPayloads()}},
		{"pingpong-drop", func(r *gpu.Rank) error {
			b := r.Alloc(gpu.Float32, 16)
			if r.ID() == 0 {
				return r.Send(b, 1, 0)
			}
			_, err := r.Recv(b, 0, 0)
			return err
		}, []string{"--fault", "drop"}, "replay-drop.golden", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := recordInProcess(t, c.name, 2, c.fn, c.opts...)
			code, out, _ := runCmd(t, append(append([]string{"replay"}, c.args...), path)...)
			if code != 1 {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			golden(t, c.golden, out)
		})
	}
}

// TestCheckForcedMatchReproducesWithReplay: rank 2 sends 1ms after rank 1,
// more than the delay fault shifts a message, so only the forced match finds
// the race; check names it by its --force-match, and replay with that flag
// prints the same finding.
func TestCheckForcedMatchReproducesWithReplay(t *testing.T) {
	path := recordInProcess(t, "anysource-late", 3, func(r *gpu.Rank) error {
		if r.ID() == 2 {
			if err := r.Compute(time.Millisecond); err != nil {
				return err
			}
		}
		return anySourceRace(r)
	})
	// The model replays the other order cleanly and the program cannot be
	// re-run: an unconfirmed race, a finding with --strict.
	code, out, _ := runCmd(t, "check", "--json", "--strict", path)
	if code != 1 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	type doc struct {
		Findings  []replay.Finding    `json:"findings"`
		AnySource *replay.Enumeration `json:"anysource"`
	}
	var checked doc
	if err := json.Unmarshal([]byte(out), &checked); err != nil {
		t.Fatal(err)
	}
	if en := checked.AnySource; en == nil || en.Replayed != 2 || en.Illegal != 1 || en.CutShort {
		t.Fatalf("enumeration %+v", en)
	}
	// Both receives change (the first gets rank 2's message, so the second
	// rank 1's); one call site and one sending line: one race to judge.
	if len(checked.Findings) != 1 {
		t.Fatalf("findings %+v", checked.Findings)
	}
	for _, f := range checked.Findings {
		if f.Kind != "message-race" || f.RevealedBy != "--force-match 0:0=2" {
			t.Fatalf("finding %+v", f)
		}
	}
	code, out, _ = runCmd(t, "replay", "--force-match", "0:0=2", "--json", path)
	var replayed doc
	if err := json.Unmarshal([]byte(out), &replayed); err != nil || code != 1 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if len(replayed.Findings) != 2 || replayed.AnySource != nil || replayed.Findings[0].Signature() != checked.Findings[0].Signature() ||
		!strings.HasPrefix(checked.Findings[0].Message, replayed.Findings[0].Message+"\nunconfirmed: ") {
		t.Fatalf("replay --force-match printed\n%+v\ncheck printed\n%+v", replayed.Findings, checked.Findings)
	}
}

// TestCheckMaxForced: --max-forced caps the forced replays, and the report
// says the cap cut the enumeration short; a cap below 1 is a usage error.
func TestCheckMaxForced(t *testing.T) {
	path := recordInProcess(t, "anysource-capped", 3, func(r *gpu.Rank) error {
		if r.ID() == 2 {
			if err := r.Compute(time.Millisecond); err != nil {
				return err
			}
		}
		return anySourceRace(r)
	})
	code, out, _ := runCmd(t, "check", "--json", "--strict", "--max-forced", "1", path)
	var doc struct {
		AnySource *replay.Enumeration `json:"anysource"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if en := doc.AnySource; en == nil || en.Cap != 1 || en.Replayed != 1 || !en.CutShort || en.Alternatives != 2 {
		t.Fatalf("enumeration %+v", doc.AnySource)
	}
	code, out, errs := runCmd(t, "check", "--max-forced", "0", path)
	if code != 2 || out != "" || errs != "p2ptrace: --max-forced 0: want at least 1 forced replay\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
