package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestRefusesSpecialFilesAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(dir, "reg")
	if err := os.WriteFile(reg, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, kind string }{
		{fifo, "a FIFO"}, {"/dev/zero", "a character device"}, {dir, "a directory"},
	} {
		start := time.Now()
		_, err := ReadFile(tc.path)
		if !errors.Is(err, ErrNotRegular) {
			t.Fatalf("%s: err %v, want ErrNotRegular", tc.path, err)
		}
		if want := tc.path + ": not a regular file (it is " + tc.kind + ")"; err.Error() != want {
			t.Errorf("message %q, want %q", err, want)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", tc.path, d)
		}
	}
	if b, err := ReadFile(reg); err != nil || string(b) != "x" {
		t.Fatalf("regular file: %q %v", b, err)
	}
}
