package trace_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// rankValues returns every block value of the trace, by rank then index.
func rankValues(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := map[string][]string{}
	err = db.View(func(tx *bolt.Tx) error {
		ranks := tx.Bucket([]byte("ranks"))
		return ranks.ForEachBucket(func(k []byte) error {
			return ranks.Bucket(k).ForEach(func(_, v []byte) error {
				m[string(k)] = append(m[string(k)], string(v))
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A writer flushed every few events (and by a 1 ms ticker) stores the same
// blocks, byte for byte, as one never flushed: a flush rewrites a rank's
// open block until it is full instead of cutting it short.
func TestFlushedWriterKeepsFullBlocks(t *testing.T) {
	dir := t.TempDir()
	evs := ring(4, 150)
	opts := fastOpts
	opts.BlockSize = 256
	unflushed := filepath.Join(dir, "unflushed.p2ptrace")
	writeTrace(t, unflushed, trace.Header{WorldSize: 4}, opts, evs)

	flushed := filepath.Join(dir, "flushed.p2ptrace")
	fopts := opts
	fopts.FlushInterval = time.Millisecond
	w, err := trace.Create(flushed, trace.Header{WorldSize: 4}, fopts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		w.Append(&evs[i])
		if i%7 == 0 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}

	want, got := rankValues(t, unflushed), rankValues(t, flushed)
	if len(want["\x00\x00\x00\x00"]) < 10 {
		t.Fatalf("rank 0 has %d blocks: too few to test", len(want["\x00\x00\x00\x00"]))
	}
	for rank, blocks := range want {
		if len(got[rank]) != len(blocks) {
			t.Fatalf("rank %x: %d blocks flushed, %d unflushed", rank, len(got[rank]), len(blocks))
		}
		for i := range blocks {
			if got[rank][i] != blocks[i] {
				t.Fatalf("rank %x block %d differs: %d bytes flushed, %d unflushed", rank, i, len(got[rank][i]), len(blocks[i]))
			}
		}
	}
	r, err := trace.Open(flushed)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sameEvents(t, byRank(evs), readAll(t, r))
}

// usedPages returns the file size, the pages the trace's last transaction
// uses and the free pages among them.
func usedPages(t *testing.T, path string) (size, used, free int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Read-write: a read-only bbolt does not load the freelist. Nothing
	// is written.
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		used = tx.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size(), used, int64(db.Stats().FreePageN) * int64(db.Info().PageSize)
}

// After Close the file is the pages the trace uses, not bbolt's growth
// (which doubles the file) nor the old versions of rewritten blocks (a
// compacting copy drops them): within a few pages of the data.
func TestClosedFileHoldsTheData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	evs := ring(32, 300) // about 8 KiB, two pages, per rank
	w, err := trace.Create(path, trace.Header{WorldSize: 32}, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		w.Append(&evs[i])
		if i%(32*6*30) == 0 { // every rank's block rewritten, ten times
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	size, used, free := usedPages(t, path)
	var data int64
	for _, blocks := range rankValues(t, path) {
		for _, v := range blocks {
			data += int64(len(v))
		}
	}
	if size != used {
		t.Errorf("file %d bytes, its pages %d: bbolt's growth left in", size, used)
	}
	if free*8 > used {
		t.Errorf("%d of %d bytes are free pages: not compacted", free, used)
	}
	// A page per rank (the bucket's last, partly filled) and a few for
	// the meta, sites and tree pages.
	if limit := data + 32*4096 + 16*4096; size > limit {
		t.Errorf("file %d bytes for %d bytes of blocks (limit %d)", size, data, limit)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode after compaction: %v %v, want 0644", fi.Mode(), err)
	}
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	sameEvents(t, byRank(evs), readAll(t, r))
	if m, _ := filepath.Glob(path + ".compact-*"); len(m) != 0 {
		t.Errorf("left behind: %v", m)
	}
}

// UpdateHeader rewrites the header and keeps the file trimmed.
func TestUpdateHeaderKeepsFileTrimmed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	writeTrace(t, path, trace.Header{WorldSize: 4}, fastOpts, ring(4, 200))
	if err := trace.UpdateHeader(path, func(h *trace.Header) { h.Message = "hung: analysed" }); err != nil {
		t.Fatal(err)
	}
	if size, used, _ := usedPages(t, path); size != used {
		t.Errorf("file %d bytes, its pages %d", size, used)
	}
}

// A trace written by main's writer before blocks were rewritten in place
// (a flush every 10 events: 168 short blocks) reads the same events.
func TestOldWriterFileReads(t *testing.T) {
	r, err := trace.Open(filepath.Join("testdata", "v1-main-flushed.p2ptrace"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := r.VerifyResult()
	if err != nil {
		t.Fatal(err)
	}
	if res.Blocks != 168 {
		t.Errorf("%d blocks, want the 168 the old writer wrote", res.Blocks)
	}
	sameEvents(t, byRank(ring(4, 30)), readAll(t, r))
}

// killedIters is the length of killedWriterChild's ring (48 events an
// iteration): more than it appends before it is killed.
const killedIters = 800

// killedWriterChild appends and flushes (1 ms ticker and explicit flushes)
// for ever, printing the events appended at each explicit flush, until it
// is killed.
func killedWriterChild(path string) {
	opts := fastOpts
	opts.FlushInterval = time.Millisecond
	opts.BlockSize = 2048
	w, err := trace.Create(path, trace.Header{WorldSize: 8}, opts)
	if err != nil {
		fmt.Println("create:", err)
		os.Exit(1)
	}
	evs := ring(8, killedIters)
	for i := range evs {
		w.Append(&evs[i])
		if i%97 == 96 {
			if err := w.Flush(); err != nil {
				fmt.Println("flush:", err)
				os.Exit(1)
			}
			fmt.Println(i + 1)
		}
	}
	fmt.Println("END")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// A recorder killed (SIGKILL) while it rewrites its open blocks leaves a
// readable trace, cut short, with at least every event of its last flush
// and whole blocks.
func TestKilledWriterLeavesReadableTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "killed.p2ptrace")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "P2PTRACE_KILLED_CHILD="+path)
	cmd.Stdin, _ = os.Open(os.DevNull)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	sc := bufio.NewScanner(stdout)
	flushed := 0
	for sc.Scan() && flushed < 8000 {
		if sc.Text() == "END" {
			break
		}
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("child: %q", sc.Text())
		}
		flushed = n
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Incomplete() {
		t.Error("a killed recording reads as finished")
	}
	res, err := r.VerifyResult()
	if err != nil {
		t.Fatal(err)
	}
	if res.Events < int64(flushed) {
		t.Errorf("%d events in the file, %d were flushed", res.Events, flushed)
	}
	// Blocks of 2 KiB at a few bytes per event, whatever the ~80
	// flushes: flushed blocks cut short would be one per rank and flush.
	if res.Blocks*100 > res.Events {
		t.Errorf("%d blocks for %d events: flushes cut blocks short", res.Blocks, res.Events)
	}
	want := byRank(ring(8, killedIters))
	got := readAll(t, r)
	for rank, evs := range got {
		sameEvents(t, map[int32][]trace.Event{rank: want[rank][:len(evs)]}, map[int32][]trace.Event{rank: evs})
	}
}

// A writer killed during its compacting copy leaves "<trace>.compact-N"
// beside the trace; the next writer of that path removes it, and only it:
// not a copy another process still holds (its lock), nor a file that only
// looks like one.
func TestStaleCompactCopiesAreRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.p2ptrace")
	stale := path + ".compact-123456"
	held := path + ".compact-777"
	others := []string{path + ".compact-notes", path + ".compact-", filepath.Join(dir, "u.p2ptrace.compact-1")}
	for _, name := range append([]string{stale, held}, others...) {
		if err := os.WriteFile(name, []byte("partial copy"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	w, err := trace.Create(path, trace.Header{WorldSize: 2}, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after Create: %v, want it removed", filepath.Base(stale), err)
	}
	evs := ring(2, 10)
	for i := range evs {
		w.Append(&evs[i])
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	for _, name := range append([]string{held}, others...) {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("%s: %v, want it kept", filepath.Base(name), err)
		}
	}
}
