package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// runCmd runs the command line and returns its exit status and output.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// smallTrace writes a 2-rank trace: rank 0 sends twice to rank 1 (Send and
// Isend+Wait), rank 1 receives with Recv and Irecv(any source)+Wait.
func smallTrace(t *testing.T, dir string, status trace.Status) string {
	t.Helper()
	path := filepath.Join(dir, "small.p2ptrace")
	h := trace.Header{
		ToolVersion: "v0.0.0-test", Command: []string{"ring", "-n", "2"}, WorldSize: 2, Backend: "sim",
		EagerLimit: 4096, LatencyNS: 1000, BandwidthBps: 1e9, HashMode: "full",
		StartUnixNano: 1_700_000_000_000_000_000,
	}
	w, err := trace.Create(path, h, trace.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	w.AddSite(trace.Site{ID: 1, Function: "main.rank0", File: "ring/main.go", Line: 20})
	w.AddSite(trace.Site{ID: 2, Function: "main.rank0", File: "ring/main.go", Line: 21})
	w.AddSite(trace.Site{ID: 3, Function: "main.rank1", File: "ring/main.go", Line: 30})
	w.AddSite(trace.Site{ID: 4, Function: "main.rank1", File: "ring/main.go", Line: 31})
	evs := []trace.Event{
		{Kind: trace.KindPost, Rank: 0, Seq: 0, Op: trace.OpSend, Peer: 1, Tag: 5, Dtype: trace.Float64, Count: 4, Bytes: 32, Site: 1, PostVT: 0, MatchRank: trace.NoRank, HashPost: 0xabcdef},
		{Kind: trace.KindPost, Rank: 1, Seq: 0, Op: trace.OpRecv, Peer: 0, Tag: 5, Dtype: trace.Float64, Count: 4, Bytes: 32, Site: 3, PostVT: 0, MatchRank: trace.NoRank},
		{Kind: trace.KindDone, Rank: 0, Seq: 0, Op: trace.OpSend, MatchRank: 1, MatchSeq: 0, MatchVT: 500, DoneVT: 1032, HashDone: 0xabcdef},
		{Kind: trace.KindDone, Rank: 1, Seq: 0, Op: trace.OpRecv, MatchRank: 0, MatchSeq: 0, MatchVT: 500, DoneVT: 1032, Source: 0, StatusTag: 5, StatusCnt: 4, HashDone: 0xabcdef},
		{Kind: trace.KindPost, Rank: 0, Seq: 1, Op: trace.OpIsend, Peer: 1, Tag: 6, Dtype: trace.Int32, Count: 2, Bytes: 8, Req: 1, Site: 2, PostVT: 1032, MatchRank: trace.NoRank, HashPost: 0x1234},
		{Kind: trace.KindPost, Rank: 1, Seq: 1, Op: trace.OpIrecv, Peer: trace.AnySource, Tag: trace.AnyTag, Dtype: trace.Int32, Count: 2, Bytes: 8, Req: 1, Site: 4, PostVT: 1032, MatchRank: trace.NoRank},
		{Kind: trace.KindPost, Rank: 0, Seq: 2, Op: trace.OpWait, Reqs: []uint64{1}, Site: 2, PostVT: 1032, MatchRank: trace.NoRank},
		{Kind: trace.KindPost, Rank: 1, Seq: 2, Op: trace.OpWait, Reqs: []uint64{1}, Site: 4, PostVT: 1032, MatchRank: trace.NoRank},
		{Kind: trace.KindDone, Rank: 0, Seq: 1, Op: trace.OpIsend, MatchRank: 1, MatchSeq: 1, MatchVT: 1032, DoneVT: 2040, HashDone: 0x1234},
		{Kind: trace.KindDone, Rank: 1, Seq: 1, Op: trace.OpIrecv, MatchRank: 0, MatchSeq: 1, MatchVT: 1032, DoneVT: 2040, Source: 0, StatusTag: 6, StatusCnt: 2, HashDone: 0x1234},
		{Kind: trace.KindDone, Rank: 0, Seq: 2, Op: trace.OpWait, MatchRank: trace.NoRank, DoneVT: 2040},
	}
	if status != trace.StatusRunning {
		// Rank 1's Wait completes in a finished run.
		evs = append(evs, trace.Event{Kind: trace.KindDone, Rank: 1, Seq: 2, Op: trace.OpWait, MatchRank: trace.NoRank, DoneVT: 2040})
	}
	for i := range evs {
		w.Append(&evs[i])
	}
	if status == trace.StatusRunning {
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		// A killed recorder: copy the file as it is, without Close.
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		w.Close(trace.StatusComplete, "")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	w.SetHeader(func(h *trace.Header) { h.EndUnixNano = h.StartUnixNano + 2_500_000_000 })
	if err := w.Close(status, ""); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestShowSummary(t *testing.T) {
	path := smallTrace(t, t.TempDir(), trace.StatusComplete)
	code, out, errs := runCmd(t, "show", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"status:          complete",
		"format version:  1",
		"command:         ring -n 2",
		"backend:         sim",
		"eager limit:     4096 bytes",
		"ranks:           2",
		"events:          12",
		"RANK  EVENTS  Send  Recv  Isend  Irecv  Wait",
		"   0       6     1     0      1      0     1",
		"   1       6     0     1      0      1     1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestShowIncomplete(t *testing.T) {
	path := smallTrace(t, t.TempDir(), trace.StatusRunning)
	code, out, errs := runCmd(t, "show", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "status:          incomplete: the recording was cut short") {
		t.Errorf("no incomplete status:\n%s", out)
	}
	code, out, _ = runCmd(t, "show", "--events", "--rank", "1", path)
	if code != 0 || !strings.Contains(out, "(pending)") || strings.Contains(out, "rank 0\n") {
		t.Errorf("exit %d, want rank 1 only with a pending Wait:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "verify", path)
	if code != 0 || !strings.Contains(out, "sound (11 events, 2 blocks); incomplete: the recording was cut short") {
		t.Errorf("verify: exit %d: %s", code, out)
	}
}

func TestShowEventsGolden(t *testing.T) {
	dir := t.TempDir()
	path := smallTrace(t, dir, trace.StatusComplete)
	code, out, errs := runCmd(t, "show", "--events", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden(t, "show-events.golden", strings.ReplaceAll(out, dir, "DIR"))
}

func TestShowJSON(t *testing.T) {
	path := smallTrace(t, t.TempDir(), trace.StatusComplete)
	code, out, errs := runCmd(t, "show", "--json", "--events", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	for _, k := range []string{"ranks", "events", "status", "format_version", "command", "ops", "per_rank"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no key %q", k)
		}
	}
	if doc["ranks"] != 2.0 || doc["events"] != 12.0 || doc["status"] != "complete" || doc["format_version"] != 1.0 {
		t.Errorf("doc = %v", doc)
	}
	ops := doc["ops"].([]any)
	if len(ops) != 6 {
		t.Fatalf("%d ops, want 6", len(ops))
	}
	op := ops[0].(map[string]any)
	if op["op"] != "Send" || op["site"] != "ring/main.go:20" || op["match_rank"] != 1.0 || op["hash_post"] != "0000000000abcdef" {
		t.Errorf("first op = %v", op)
	}
	// Deterministic.
	_, out2, _ := runCmd(t, "show", "--json", "--events", path)
	if out != out2 {
		t.Error("show --json output differs between runs")
	}
}

func TestShowBadRank(t *testing.T) {
	path := smallTrace(t, t.TempDir(), trace.StatusComplete)
	code, _, errs := runCmd(t, "show", "--rank", "5", path)
	if code != 2 || !strings.Contains(errs, "--rank 5: the trace has ranks 0 to 1") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestVerify(t *testing.T) {
	path := smallTrace(t, t.TempDir(), trace.StatusComplete)
	code, out, errs := runCmd(t, "verify", path)
	if code != 0 || out != path+": sound (12 events, 2 blocks)\n" {
		t.Errorf("exit %d: %q %s", code, out, errs)
	}
}

func TestVerifyDamaged(t *testing.T) {
	path := smallTrace(t, t.TempDir(), trace.StatusComplete)
	// Corrupt one block value in place, keeping the bbolt structure.
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("ranks")).Bucket([]byte{0, 0, 0, 1})
		k, v := b.Cursor().First()
		v = append([]byte(nil), v...)
		v[len(v)-1] ^= 0xff
		return b.Put(k, v)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "verify", path)
	if code != 2 || !strings.Contains(errs, "trace is damaged: rank 1: block 0: checksum mismatch") || out != "" {
		t.Errorf("exit %d: out %q err %q", code, out, errs)
	}
	if strings.Count(errs, "\n") != 1 {
		t.Errorf("want a one-line error: %q", errs)
	}
}

func TestExportChrome(t *testing.T) {
	dir := t.TempDir()
	path := smallTrace(t, dir, trace.StatusComplete)
	outPath := filepath.Join(dir, "out.json")
	code, out, errs := runCmd(t, "export", "--format", "chrome", "-o", outPath, path)
	if code != 0 || out != "" {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	b, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Ph   string         `json:"ph"`
			Tid  int            `json:"tid"`
			Ts   float64        `json:"ts"`
			Dur  float64        `json:"dur"`
			ID   int            `json:"id"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	count := map[string]int{}
	threads := map[string]bool{}
	for _, ev := range doc.TraceEvents {
		count[ev.Ph]++
		if ev.Name == "thread_name" {
			threads[ev.Args["name"].(string)] = true
		}
		if ev.Ph == "X" && ev.Name == "Send" && (ev.Tid != 0 || ev.Ts != 0 || ev.Dur != 1.032) {
			t.Errorf("Send slice = %+v", ev)
		}
		if ev.Ph == "f" && ev.ID == 1 && (ev.Tid != 1 || ev.Ts != 1.032) {
			t.Errorf("first flow end = %+v", ev)
		}
	}
	if count["X"] != 6 || count["s"] != 2 || count["f"] != 2 || !threads["rank 0"] || !threads["rank 1"] {
		t.Errorf("event counts %v, threads %v", count, threads)
	}
	// Refuses to overwrite without --force.
	code, _, errs = runCmd(t, "export", "-o", outPath, path)
	if code != 2 || !strings.Contains(errs, "exists (use --force") {
		t.Errorf("overwrite: exit %d: %s", code, errs)
	}
	if code, _, errs = runCmd(t, "export", "--force", "-o", outPath, path); code != 0 {
		t.Errorf("--force: exit %d: %s", code, errs)
	}
	// To stdout, deterministic.
	_, out1, _ := runCmd(t, "export", path)
	if out1 != string(b) {
		t.Error("stdout export differs from the file")
	}
}

func TestExportBadFormat(t *testing.T) {
	path := smallTrace(t, t.TempDir(), trace.StatusComplete)
	code, _, errs := runCmd(t, "export", "--format", "svg", path)
	if code != 2 || !strings.Contains(errs, `invalid --format "svg": valid formats are chrome`) {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := smallTrace(t, dir, trace.StatusComplete)
	b, _ := os.ReadFile(good)
	files := map[string][]byte{
		"empty":     {},
		"text":      []byte("hello\n"),
		"truncated": b[:5000],
	}
	for name, data := range files {
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	foreign := filepath.Join(dir, "foreign")
	db, _ := bolt.Open(foreign, 0o644, nil)
	db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("x")); return err })
	db.Close()
	newer := filepath.Join(dir, "newer")
	os.WriteFile(newer, b, 0o644)
	db, _ = bolt.Open(newer, 0o644, nil)
	db.Update(func(tx *bolt.Tx) error {
		return putHeaderJSON(tx, `{"format_version":7}`)
	})
	db.Close()
	cases := []struct{ file, msg string }{
		{"missing", "no such file or directory"},
		{"empty", "not a p2ptrace trace: the file is empty"},
		{"text", "not a p2ptrace trace: not a bbolt database"},
		{"truncated", "trace is damaged: truncated"},
		{"foreign", "not a p2ptrace trace: a bbolt database without the p2ptrace meta bucket"},
		{"newer", "trace format version 7 is newer than this p2ptrace supports (1); upgrade p2ptrace"},
	}
	for _, c := range cases {
		for _, cmd := range [][]string{{"show"}, {"show", "--events", "--json"}, {"verify"}, {"export"}} {
			path := filepath.Join(dir, c.file)
			code, out, errs := runCmd(t, append(cmd, path)...)
			if code != 2 || !strings.HasPrefix(errs, "p2ptrace: ") || !strings.Contains(errs, c.msg) ||
				!strings.Contains(errs, path) || strings.Count(errs, "\n") != 1 || out != "" {
				t.Errorf("%v %s: exit %d, stderr %q, stdout %q; want exit 2 and %q", cmd, c.file, code, errs, out, c.msg)
			}
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"show"},
		{"show", "a", "b"},
		{"show", "--bogus", "x"},
		{"nosuchcommand"},
		{"--profile", "gpu", "show", "x"},
	} {
		code, _, errs := runCmd(t, args...)
		if code != 2 || !strings.HasPrefix(errs, "p2ptrace: ") {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
	_, _, errs := runCmd(t, "--profile", "gpu", "show", "x")
	if !strings.Contains(errs, "valid values are block, cpu, mem, mutex") {
		t.Errorf("profile error: %s", errs)
	}
}

func TestProfile(t *testing.T) {
	dir := t.TempDir()
	path := smallTrace(t, dir, trace.StatusComplete)
	pdir := filepath.Join(dir, "prof")
	code, _, errs := runCmd(t, "--profile", "cpu", "--profile-dir", pdir, "show", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(pdir, "cpu.pprof")); err != nil {
		t.Error(err)
	}
	// Stopped on an error path too: a second profile can start.
	runCmd(t, "--profile", "mem", "--profile-dir", pdir, "show", filepath.Join(dir, "missing"))
	if code, _, errs = runCmd(t, "--profile", "mem", "--profile-dir", pdir, "show", path); code != 0 {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, c := range newRootCmd(&factory{}).Commands() {
		if c.Name() != "help" && c.Example == "" {
			t.Errorf("%s has no Example", c.Name())
		}
	}
}

// putHeaderJSON replaces the header of a trace, with its checksum.
func putHeaderJSON(tx *bolt.Tx, js string) error {
	meta := tx.Bucket([]byte("meta"))
	if err := meta.Put([]byte("header"), []byte(js)); err != nil {
		return err
	}
	c := crc32.Checksum([]byte(js), crc32.MakeTable(crc32.Castagnoli))
	return meta.Put([]byte("header_crc32c"), binary.LittleEndian.AppendUint32(nil, c))
}
