package trace_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// A Cursor decodes a block through a window of about a KiB (see Cursor):
// these tests pin what crosses the window's end.

// TestCursorEventsLongerThanWindow: events whose Reqs alone take several
// windows decode as written, in one block and across blocks.
func TestCursorEventsLongerThanWindow(t *testing.T) {
	evs := ring(2, 60)
	long := 0
	for i := range evs {
		ev := &evs[i]
		if ev.Kind != trace.KindPost || ev.Op != trace.OpWaitall || ev.Seq%4 != 2 {
			continue
		}
		// 0, 600 or 3000 requests, one to three bytes each.
		n := []int{0, 600, 3000}[long%3]
		long++
		for j := range n {
			ev.Reqs = append(ev.Reqs, uint64(j*j%5000+1))
		}
	}
	for _, size := range []int{0, 4096} {
		path := filepath.Join(t.TempDir(), "t.p2ptrace")
		opts := fastOpts
		opts.BlockSize = size
		writeTrace(t, path, trace.Header{WorldSize: 2}, opts, evs)
		r, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, byRank(evs), readAll(t, r))
		if err := r.Verify(); err != nil {
			t.Errorf("block size %d: %v", size, err)
		}
		r.Close()
	}
}

// rewriteBlock replaces block 0 of rank 0 of the trace at path with what
// edit makes of its events (the bytes after the block header), keeping
// the header's event count, under a right checksum: a block that passes
// its checksum yet does not decode.
func rewriteBlock(t *testing.T, path string, edit func(events []byte) []byte) {
	t.Helper()
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("ranks")).Bucket([]byte{0, 0, 0, 0})
		key := []byte{0, 0, 0, 0, 0, 0, 0, 0}
		v := b.Get(key)
		_, k1 := binary.Uvarint(v[4:])
		_, k2 := binary.Uvarint(v[4+k1:])
		head := 4 + k1 + k2
		if len(v)-head < 3000 {
			t.Fatalf("block of %d bytes: want one of several windows", len(v))
		}
		nv := append(append([]byte(nil), v[:head]...), edit(append([]byte(nil), v[head:]...))...)
		binary.LittleEndian.PutUint32(nv, crc32.Checksum(nv[4:], crc32.MakeTable(crc32.Castagnoli)))
		return b.Put(key, nv)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCursorBlockCutInsideWindow: a block whose events stop short of its
// count, or run past it, is an error of that rank and block after the
// events before the damage, read through several windows.
func TestCursorBlockCutInsideWindow(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"cut", func(b []byte) []byte { return b[:len(b)-5] }, "rank 0: block 0: "},
		{"trailing", func(b []byte) []byte { return append(b, 0, 0, 0) }, "rank 0: block 0: bytes after the last event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.p2ptrace")
			evs := ring(2, 400)
			writeTrace(t, path, trace.Header{WorldSize: 2}, fastOpts, evs)
			rewriteBlock(t, path, tc.edit)
			r, err := trace.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			c := r.Rank(0)
			var ev trace.Event
			n := 0
			for c.Next(&ev) {
				n++
			}
			err = c.Err()
			if !errors.Is(err, trace.ErrDamaged) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("after %d events: %v, want ErrDamaged with %q", n, err, tc.want)
			}
			if all := len(byRank(evs)[0]); n < all/2 || n > all {
				t.Errorf("%d events before the error, want most of the %d", n, all)
			}
			if c.Next(&ev) {
				t.Error("Next after the error")
			}
			if err := r.Verify(); !errors.Is(err, trace.ErrDamaged) {
				t.Errorf("Verify: %v, want ErrDamaged", err)
			}
		})
	}
}

// TestCursorFileShrinksUnderIt: a file cut short after Open (a fault in
// the mapping, read as the window is refilled) is an error, not a crash.
func TestCursorFileShrinksUnderIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	evs := ring(2, 400)
	writeTrace(t, path, trace.Header{WorldSize: 2}, fastOpts, evs)
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := r.Rank(0)
	var ev trace.Event
	if !c.Next(&ev) {
		t.Fatal(c.Err())
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	n := 1
	for c.Next(&ev) {
		n++
	}
	err = c.Err()
	if !errors.Is(err, trace.ErrDamaged) || !strings.Contains(err.Error(), "rank 0") {
		t.Fatalf("after %d events: %v, want ErrDamaged of rank 0", n, err)
	}
	if all := len(byRank(evs)[0]); n >= all {
		t.Errorf("all %d events read from a file cut to nothing", n)
	}
	// The other rank's blocks are not mapped any more either.
	c = r.Rank(1)
	for c.Next(&ev) {
	}
	if err := c.Err(); !errors.Is(err, trace.ErrDamaged) {
		t.Errorf("rank 1: %v, want ErrDamaged", err)
	}
}
