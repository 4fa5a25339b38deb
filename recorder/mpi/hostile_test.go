package mpi

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/regfile"
)

// A FIFO where a segment should be is refused at once by merge and the
// live-state reader (ReadFile of a FIFO used to block for ever).
func TestMergeRefusesFIFOSegment(t *testing.T) {
	dir := t.TempDir()
	writeSegments(t, dir)
	seg := SegmentPath(dir, 1)
	os.Remove(seg)
	if err := syscall.Mkfifo(seg, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() {
		_, err := Merge(dir, filepath.Join(dir, "t.p2ptrace"), MergeOptions{})
		done <- err
		_, err = ReadLiveState(seg)
		done <- err
	}()
	for _, want := range []string{"merge: " + seg + ": not a regular file (it is a FIFO)", seg + ": not a regular file (it is a FIFO)"} {
		select {
		case err := <-done:
			if !errors.Is(err, regfile.ErrNotRegular) || err.Error() != want {
				t.Errorf("err %v, want %q", err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a FIFO segment hangs")
		}
	}
}

// A segment claiming a world of millions of ranks: merge says which are
// missing in a line, quickly and in little memory; past 2^24 the header
// itself is refused.
func TestMergeHugeWorldSize(t *testing.T) {
	for _, tc := range []struct {
		size int32
		want string
	}{
		{1 << 24, "world size 16777216 but no segment for rank 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, and 16777205 more"},
		{1<<31 - 1, "rank 0 of size 2147483647"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(SegmentPath(dir, 0), encodeSegment(0, tc.size, StateFinalized, sampleRecs(1)), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err := Merge(dir, filepath.Join(dir, "t.p2ptrace"), MergeOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("size %d: err %v, want %q", tc.size, err, tc.want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("size %d: took %v", tc.size, d)
		}
	}
}
