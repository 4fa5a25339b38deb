package mpi

import (
	"errors"
	"os"
	"path/filepath"
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
