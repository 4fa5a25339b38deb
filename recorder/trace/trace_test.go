package trace_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	bolt "go.etcd.io/bbolt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

var fastOpts = trace.WriterOptions{NoSync: true}

// ring returns the events of a ring exchange, rank by rank interleaved as a
// recorder would append them.
func ring(ranks int32, iters int) []trace.Event {
	var evs []trace.Event
	type st struct {
		seq, req uint64
		vt, wall int64
	}
	s := make([]st, ranks)
	for i := 0; i < iters; i++ {
		for r := int32(0); r < ranks; r++ {
			p := &s[r]
			right, left := (r+1)%ranks, (r+ranks-1)%ranks
			sseq, rseq := p.seq, p.seq+1
			p.req++
			evs = append(evs, trace.Event{Kind: trace.KindPost, Rank: r, Seq: p.seq, Op: trace.OpIsend, Peer: right, Tag: 7, Dtype: trace.Float64, Count: 128, Bytes: 1024, Req: p.req, Site: 1, PostVT: p.vt, PostWall: p.wall, MatchRank: trace.NoRank})
			p.seq++
			p.req++
			p.wall += 150 + int64(i%7)*13
			evs = append(evs, trace.Event{Kind: trace.KindPost, Rank: r, Seq: p.seq, Op: trace.OpIrecv, Peer: left, Tag: 7, Dtype: trace.Float64, Count: 128, Bytes: 1024, Req: p.req, Site: 2, PostVT: p.vt, PostWall: p.wall, MatchRank: trace.NoRank})
			p.seq++
			p.wall += 120 + int64(i%5)*11
			w := p.seq
			evs = append(evs, trace.Event{Kind: trace.KindPost, Rank: r, Seq: p.seq, Op: trace.OpWaitall, Reqs: []uint64{p.req - 1, p.req}, Site: 3, PostVT: p.vt, PostWall: p.wall, MatchRank: trace.NoRank})
			p.seq++
			p.vt += 2000
			p.wall += 900 + int64(i%11)*17
			evs = append(evs, trace.Event{Kind: trace.KindDone, Rank: r, Seq: sseq, Op: trace.OpIsend, MatchRank: right, MatchSeq: rseq, MatchVT: p.vt - 1000, DoneVT: p.vt, DoneWall: p.wall})
			p.wall += 40
			evs = append(evs, trace.Event{Kind: trace.KindDone, Rank: r, Seq: rseq, Op: trace.OpIrecv, MatchRank: left, MatchSeq: sseq, MatchVT: p.vt - 1000, DoneVT: p.vt, DoneWall: p.wall, Source: left, StatusTag: 7, StatusCnt: 128})
			p.wall += 30
			evs = append(evs, trace.Event{Kind: trace.KindDone, Rank: r, Seq: w, Op: trace.OpWaitall, MatchRank: trace.NoRank, DoneVT: p.vt, DoneWall: p.wall})
			p.wall += 200 + int64(i%3)*50
		}
	}
	return evs
}

func byRank(evs []trace.Event) map[int32][]trace.Event {
	m := map[int32][]trace.Event{}
	for _, ev := range evs {
		m[ev.Rank] = append(m[ev.Rank], ev)
	}
	return m
}

func writeTrace(t testing.TB, path string, h trace.Header, opts trace.WriterOptions, evs []trace.Event) {
	t.Helper()
	w, err := trace.Create(path, h, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		w.Append(&evs[i])
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
}

func readAll(t testing.TB, r *trace.Reader) map[int32][]trace.Event {
	t.Helper()
	m := map[int32][]trace.Event{}
	for rank := 0; rank < r.Ranks(); rank++ {
		c := r.Rank(rank)
		var ev trace.Event
		for c.Next(&ev) {
			e := ev
			e.Reqs = append([]uint64(nil), ev.Reqs...)
			m[int32(rank)] = append(m[int32(rank)], e)
		}
		if err := c.Err(); err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
	}
	return m
}

func sameEvents(t testing.TB, want, got map[int32][]trace.Event) {
	t.Helper()
	if reflect.DeepEqual(want, got) {
		return
	}
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
}

func TestRoundTripEveryField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	h := trace.Header{
		ToolVersion: "v0.1.0", Command: []string{"prog", "-n", "2"}, WorldSize: 2, Backend: "sim",
		EagerLimit: 4096, LatencyNS: 1000, BandwidthBps: 1e10, Seed: 42, HashMode: "full",
		StartUnixNano: 1_700_000_000_000_000_000,
	}
	evs := []trace.Event{
		{Kind: trace.KindPost, Rank: 0, Seq: 0, Op: trace.OpIsend, Peer: 1, Tag: 5, Comm: 3, Stream: 2, Group: 1,
			Dtype: trace.Int32, Count: 10, Bytes: 40, Alloc: 7, Offset: 8, Length: 40, Req: 1, Site: 9,
			PostVT: 100, PostWall: 200, MatchRank: trace.NoRank, HashPost: 0xdeadbeefcafef00d},
		{Kind: trace.KindPost, Rank: 0, Seq: 1, Op: trace.OpCompute, Duration: 5000, PostVT: 100, PostWall: 250},
		{Kind: trace.KindDone, Rank: 0, Seq: 0, Op: trace.OpIsend, MatchVT: 300, DoneVT: 400, DoneWall: 500,
			MatchRank: 1, MatchSeq: 0, HashPost: 1, HashDone: 2, Err: trace.ErrTruncate},
		{Kind: trace.KindPost, Rank: 0, Seq: 2, Op: trace.OpWaitany, Reqs: []uint64{1, 9, 3}, PostVT: 500, PostWall: 600},
		{Kind: trace.KindDone, Rank: 0, Seq: 2, Op: trace.OpWaitany, Index: 2, Flag: true, DoneVT: 700, DoneWall: 800},
		{Kind: trace.KindPost, Rank: 1, Seq: 0, Op: trace.OpIrecv, Peer: trace.AnySource, Tag: trace.AnyTag,
			Dtype: trace.Int32, Count: 10, Bytes: 40, Req: 1, PostVT: -5, PostWall: 10},
		{Kind: trace.KindDone, Rank: 1, Seq: 0, Op: trace.OpIrecv, Source: 0, StatusTag: 5, StatusCnt: 10,
			MatchRank: 0, MatchSeq: 0, MatchVT: 300, DoneVT: 310, DoneWall: 320, HashDone: 2},
	}
	w, err := trace.Create(path, h, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	w.AddSite(trace.Site{ID: 9, Function: "main.exchange", File: "cmd/prog/main.go", Line: 42})
	w.AddSite(trace.Site{ID: 1, Function: "main.main", File: "cmd/prog/main.go", Line: 10})
	w.AddPayload(2, []byte("hello"))
	w.AddPayload(3, make([]byte, trace.DefaultPayloadCap+1)) // over the cap
	for i := range evs {
		w.Append(&evs[i])
	}
	w.SetHeader(func(h *trace.Header) { h.HashMode = "sample" })
	if err := w.Close(trace.StatusHung, "rank 1 stuck"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := r.Header()
	want := h
	want.FormatVersion = trace.FormatVersion
	want.HashMode = "sample"
	want.Status = trace.StatusHung
	want.Message = "rank 1 stuck"
	want.FindingsVersion = verdict.Version
	want.Events = int64(len(evs))
	want.RankEvents = []int64{5, 2}
	if got.EndUnixNano == 0 {
		t.Error("no end time")
	}
	want.EndUnixNano = got.EndUnixNano
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	if r.Incomplete() {
		t.Error("Incomplete on a hung trace")
	}
	wantSites := []trace.Site{{ID: 1, Function: "main.main", File: "cmd/prog/main.go", Line: 10}, {ID: 9, Function: "main.exchange", File: "cmd/prog/main.go", Line: 42}}
	if d := cmp.Diff(wantSites, r.Sites()); d != "" {
		t.Errorf("sites (-want +got):\n%s", d)
	}
	if s, ok := r.Site(9); !ok || s.Line != 42 {
		t.Errorf("Site(9) = %v, %v", s, ok)
	}
	if _, ok := r.Site(5); ok {
		t.Error("Site(5) found")
	}
	if p, ok := r.Payload(2); !ok || string(p) != "hello" {
		t.Errorf("Payload(2) = %q, %v", p, ok)
	}
	if _, ok := r.Payload(3); ok {
		t.Error("payload over the cap stored")
	}
	sameEvents(t, byRank(evs), readAll(t, r))
	if err := r.Verify(); err != nil {
		t.Error(err)
	}
}

func TestStreamingManyBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	evs := ring(4, 800)
	opts := fastOpts
	opts.BlockSize = 512 // many blocks
	writeTrace(t, path, trace.Header{WorldSize: 4}, opts, evs)
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sameEvents(t, byRank(evs), readAll(t, r))
	res, err := r.VerifyResult()
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != int64(len(evs)) || res.Blocks < 100 {
		t.Errorf("verify: %+v, want %d events in many blocks", res, len(evs))
	}
	// Reqs capacity is reused.
	c := r.Rank(0)
	ev := trace.Event{Reqs: make([]uint64, 0, 8)}
	for c.Next(&ev) {
		if ev.Op == trace.OpWaitall && cap(ev.Reqs) != 8 {
			t.Fatalf("Reqs reallocated: cap %d", cap(ev.Reqs))
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A recorder killed after a flush: its file has status running and the events.
func TestCutShort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.p2ptrace")
	evs := ring(2, 100)
	w, err := trace.Create(path, trace.Header{WorldSize: 2}, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(trace.StatusComplete, "")
	w.AddSite(trace.Site{ID: 1, Function: "f", File: "a.go", Line: 3})
	for i := range evs {
		w.Append(&evs[i])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.p2ptrace")
	copyFile(t, path, cut)
	r, err := trace.Open(cut)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Incomplete() || r.Header().Status != trace.StatusRunning {
		t.Errorf("status %q, want running", r.Header().Status)
	}
	if _, ok := r.Site(1); !ok {
		t.Error("site not flushed")
	}
	sameEvents(t, byRank(evs), readAll(t, r))
	if err := r.Verify(); err != nil {
		t.Error(err)
	}
}

// The ticker writes partial blocks without an explicit Flush.
func TestFlushByTicker(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.p2ptrace")
	evs := ring(2, 10)
	opts := fastOpts
	opts.FlushInterval = 5 * time.Millisecond
	w, err := trace.Create(path, trace.Header{WorldSize: 2}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(trace.StatusComplete, "")
	for i := range evs {
		w.Append(&evs[i])
	}
	cut := filepath.Join(dir, "cut.p2ptrace")
	for i := 0; ; i++ { // poll: no fixed sleep
		copyFile(t, path, cut)
		r, err := trace.Open(cut)
		if err == nil {
			res, verr := r.VerifyResult()
			r.Close()
			if verr == nil && res.Events == int64(len(evs)) {
				return
			}
		}
		if i > 2000 {
			t.Fatalf("events not flushed by the ticker: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestExists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	writeTrace(t, path, trace.Header{}, fastOpts, nil)
	_, err := trace.Create(path, trace.Header{}, fastOpts)
	if !errors.Is(err, trace.ErrExists) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want ErrExists naming the path", err)
	}
	opts := fastOpts
	opts.Force = true
	evs := ring(1, 1)
	writeTrace(t, path, trace.Header{}, opts, evs)
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Header().Events != int64(len(evs)) {
		t.Errorf("forced file has %d events", r.Header().Events)
	}
}

func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	if os.Getenv("P2PTRACE_LOCK_CHILD") != "" {
		return
	}
	w, err := trace.Create(path, trace.Header{}, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(trace.StatusComplete, "")
	opts := fastOpts
	opts.Force = true
	opts.LockTimeout = 50 * time.Millisecond
	_, err = trace.Create(path, trace.Header{}, opts)
	if !errors.Is(err, trace.ErrLocked) || !strings.Contains(err.Error(), "another process holds it") {
		t.Fatalf("second writer: err = %v, want ErrLocked", err)
	}
	// From another process too.
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockedChild$")
	cmd.Env = append(os.Environ(), "P2PTRACE_LOCK_PATH="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "LOCKED") {
		t.Fatalf("child did not see the lock:\n%s", out)
	}
}

func TestLockedChild(t *testing.T) {
	path := os.Getenv("P2PTRACE_LOCK_PATH")
	if path == "" {
		t.Skip("run by TestLocked")
	}
	_, err := trace.Create(path, trace.Header{}, trace.WriterOptions{Force: true, LockTimeout: 50 * time.Millisecond})
	if errors.Is(err, trace.ErrLocked) {
		fmt.Println("LOCKED")
	} else {
		fmt.Println("not locked:", err)
	}
}

func TestEmptyAndForeign(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	text := filepath.Join(dir, "text")
	os.WriteFile(text, []byte(strings.Repeat("hello, world\n", 1000)), 0o644)
	foreign := filepath.Join(dir, "foreign.db")
	db, err := bolt.Open(foreign, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucket([]byte("stuff"))
		return b.Put([]byte("k"), []byte("v"))
	})
	db.Close()
	for _, c := range []struct{ path, msg string }{
		{empty, "the file is empty"},
		{text, "not a bbolt database"},
		{foreign, "not a p2ptrace trace"},
		{dir, "not a regular file (it is a directory)"},
	} {
		_, err := trace.Open(c.path)
		if !errors.Is(err, trace.ErrNotTrace) || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("Open(%s) = %v, want ErrNotTrace with %q", c.path, err, c.msg)
		}
	}
	_, err = trace.Open(filepath.Join(dir, "missing"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestNewerVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	writeTrace(t, path, trace.Header{}, fastOpts, ring(1, 1))
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return putHeaderJSON(tx, `{"format_version":99,"status":"complete"}`)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = trace.Open(path)
	want := "trace format version 99 is newer than this p2ptrace supports (1); upgrade p2ptrace"
	if !errors.Is(err, trace.ErrNewerVersion) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// exercise opens path and reads everything; it must not panic.
func exercise(path string) error {
	r, err := trace.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	for rank := 0; rank < r.Ranks() && rank < 64; rank++ {
		c := r.Rank(rank)
		var ev trace.Event
		for c.Next(&ev) {
		}
	}
	r.Sites()
	r.Payload(2)
	return r.Verify()
}

func damagedSample(t *testing.T) []byte {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	w, err := trace.Create(path, trace.Header{WorldSize: 3}, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	w.AddSite(trace.Site{ID: 1, Function: "f", File: "a.go", Line: 1})
	w.AddPayload(2, []byte("payload"))
	evs := ring(3, 200)
	for i := range evs {
		w.Append(&evs[i])
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTruncated(t *testing.T) {
	b := damagedSample(t)
	dir := t.TempDir()
	// bbolt grows its file ahead of use: cutting the unused tail loses nothing.
	orig := filepath.Join(dir, "orig")
	os.WriteFile(orig, b, 0o644)
	var used int
	db, err := bolt.Open(orig, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error { used = int(tx.Size()); return nil })
	db.Close()
	if used < len(b) {
		path := filepath.Join(dir, "tail")
		os.WriteFile(path, b[:used], 0o644)
		if err := exercise(path); err != nil {
			t.Errorf("cut to the used size %d: %v", used, err)
		}
	}
	for _, n := range []int{1, 15, 100, 4095, 4096, 4097, 8192, used / 3, used / 2, used - 4096, used - 1} {
		if n <= 0 || n >= used {
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("cut%d", n))
		os.WriteFile(path, b[:n], 0o644)
		err := exercise(path)
		if err == nil {
			t.Errorf("cut at %d of %d: no error", n, len(b))
			continue
		}
		if !errors.Is(err, trace.ErrDamaged) && !errors.Is(err, trace.ErrNotTrace) {
			t.Errorf("cut at %d: %v, want ErrDamaged", n, err)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("cut at %d: error does not name the file: %v", n, err)
		}
	}
}

func TestBitFlips(t *testing.T) {
	b := damagedSample(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "flip")
	step := len(b) / 150
	errs := 0
	for off := 0; off < len(b); off += step + off%7 {
		c := append([]byte(nil), b...)
		c[off] ^= 1 << (off % 8)
		os.WriteFile(path, c, 0o644)
		if exercise(path) != nil {
			errs++
		}
	}
	t.Logf("%d flips were errors", errs)
}

func TestAppendInvalidEvent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	w, err := trace.Create(path, trace.Header{}, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	w.Append(&trace.Event{Kind: 9, Rank: 0})
	if err := w.Flush(); err == nil || !strings.Contains(err.Error(), "invalid event") {
		t.Errorf("Flush: %v", err)
	}
	if err := w.Close(trace.StatusComplete, ""); err == nil {
		t.Error("Close: no error")
	}
	if err := w.Flush(); !errors.Is(err, trace.ErrClosed) {
		t.Errorf("Flush after Close: %v", err)
	}
	w.Append(&trace.Event{Kind: trace.KindPost}) // ignored
}

func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	// 120 iterations: blocks of several Cursor windows (3 KB).
	for _, iters := range []int{3, 120} {
		path := filepath.Join(dir, fmt.Sprintf("seed%d", iters))
		w, err := trace.Create(path, trace.Header{WorldSize: 2}, fastOpts)
		if err != nil {
			f.Fatal(err)
		}
		evs := ring(2, iters)
		for i := range evs {
			w.Append(&evs[i])
		}
		w.Close(trace.StatusComplete, "")
		b, _ := os.ReadFile(path)
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte("not a trace"))
	// One file per fuzzing process, rewritten for each input (in memory
	// where /dev/shm exists): a directory per input costs more than the
	// input. It is unlinked at once and reached through /proc/self/fd, so
	// that a fuzzing process ended without cleanup leaves nothing behind.
	tmp := os.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		tmp = "/dev/shm"
	}
	file, err := os.CreateTemp(tmp, "p2ptrace-fuzz-")
	if err != nil {
		f.Fatal(err)
	}
	os.Remove(file.Name())
	f.Cleanup(func() { file.Close() })
	p := fmt.Sprintf("/proc/self/fd/%d", file.Fd())
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		exercise(p)
	})
}

// A branch page pointing at itself: bbolt alone would loop forever.
func TestPageCycle(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.p2ptrace")
	opts := fastOpts
	opts.BlockSize = 256
	writeTrace(t, path, trace.Header{WorldSize: 1}, opts, ring(1, 3000))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const ps = 4096
	found := false
	for id := 2; (id+1)*ps <= len(b); id++ {
		p := b[id*ps:]
		if binary.LittleEndian.Uint64(p) == uint64(id) && binary.LittleEndian.Uint16(p[8:]) == 0x01 && binary.LittleEndian.Uint16(p[10:]) > 1 {
			binary.LittleEndian.PutUint64(p[16+8:], uint64(id)) // element 0 -> this page
			found = true
			break
		}
	}
	if !found {
		t.Skip("no branch page")
	}
	bad := filepath.Join(dir, "cycle")
	os.WriteFile(bad, b, 0o644)
	_, err = trace.Open(bad)
	if !errors.Is(err, trace.ErrDamaged) || !strings.Contains(err.Error(), "referenced twice") {
		t.Fatalf("err = %v, want ErrDamaged for a page cycle", err)
	}
}

func TestVerifyCountsAgainstHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	writeTrace(t, path, trace.Header{WorldSize: 2}, fastOpts, ring(2, 10))
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return putHeaderJSON(tx, `{"format_version":1,"ranks":2,"status":"complete","events":120,"rank_events":[60,61]}`)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = r.Verify()
	if !errors.Is(err, trace.ErrDamaged) || !strings.Contains(err.Error(), "rank 1: 60 events, the header says 61") {
		t.Fatalf("Verify = %v", err)
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

func TestHeaderChecksum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	writeTrace(t, path, trace.Header{Backend: "sim"}, fastOpts, nil)
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		m := tx.Bucket([]byte("meta"))
		h := append([]byte(nil), m.Get([]byte("header"))...)
		return m.Put([]byte("header"), []byte(strings.Replace(string(h), `"sim"`, `"sjm"`, 1)))
	})
	db.Close()
	_, err = trace.Open(path)
	if !errors.Is(err, trace.ErrDamaged) || !strings.Contains(err.Error(), "the header fails its checksum") {
		t.Fatalf("err = %v", err)
	}
}

func TestUpdateHeaderKeepsEventsAndCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	evs := []trace.Event{{Kind: trace.KindPost, Rank: 0, Seq: 0, Op: trace.OpFinalize}}
	writeTrace(t, path, trace.Header{WorldSize: 1}, trace.WriterOptions{}, evs)
	err := trace.UpdateHeader(path, func(h *trace.Header) {
		h.Status = trace.StatusHung
		h.Message = "hang: rank 0 blocked"
		h.WorldSize = 99 // not the header's to change: kept
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	if h.Status != trace.StatusHung || h.Message != "hang: rank 0 blocked" || h.WorldSize != 1 || h.Events != 1 {
		t.Fatalf("header after update: %+v", h)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateHeaderOfForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(path, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := trace.UpdateHeader(path, func(*trace.Header) {})
	if !errors.Is(err, trace.ErrNotTrace) && !errors.Is(err, trace.ErrDamaged) {
		t.Fatalf("UpdateHeader of a foreign file: %v, want ErrNotTrace or ErrDamaged", err)
	}
}

// TestSendAndRecvOps pins which ops post a message and which post a
// receive (IsSend and IsRecv are bit masks).
func TestSendAndRecvOps(t *testing.T) {
	sends := map[trace.Op]bool{trace.OpSend: true, trace.OpSsend: true, trace.OpBsend: true, trace.OpRsend: true, trace.OpIsend: true,
		trace.OpIssend: true, trace.OpIbsend: true, trace.OpIrsend: true, trace.OpSendrecv: true, trace.OpStreamSend: true}
	recvs := map[trace.Op]bool{trace.OpRecv: true, trace.OpIrecv: true, trace.OpStreamRecv: true}
	for o := range trace.Op(255) {
		if got := o.IsSend(); got != sends[o] {
			t.Errorf("%v.IsSend() = %v, want %v", o, got, sends[o])
		}
		if got := o.IsRecv(); got != recvs[o] {
			t.Errorf("%v.IsRecv() = %v, want %v", o, got, recvs[o])
		}
	}
}
