// Package benchtrace gives benchmarks recorded traces to measure: the
// programs of testdata/train run with recording on, exactly as
// `p2ptrace record` runs them, so that a benchmark measures what a user's
// trace costs and not a synthetic stream.
//
// Traces are generated when a benchmark starts and never committed. They
// are cached in the system's temporary directory under a key made of the
// program, its arguments and the hash of the running test binary (which
// holds the recorder and the trace writer), so that -count 10 records once
// and a change of the format records again.
package benchtrace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder"
)

// Program returns the directory of testdata/train/NAME in this module.
func Program(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "train", name)
}

// Record returns the path of a trace of testdata/train/PROGRAM run with
// args, recorded with the given hash mode ("" = full). The trace is shared
// by the callers of one test binary: treat it as read-only.
func Record(tb testing.TB, program, hash string, args ...string) string {
	tb.Helper()
	self, err := os.Executable()
	if err != nil {
		tb.Fatalf("benchtrace: %v", err)
	}
	sum, err := recorder.FileHash(self)
	if err != nil {
		tb.Fatalf("benchtrace: %v", err)
	}
	key := sha256.Sum256([]byte(strings.Join(append([]string{sum, program, hash}, args...), "\x00")))
	dir := filepath.Join(os.TempDir(), "p2ptrace-benchtrace")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatalf("benchtrace: %v", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.db", program, hex.EncodeToString(key[:8])))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	// Record beside it and rename: two benchmark binaries may record the
	// same trace at once, and neither may see a half-written file.
	tmp, err := os.CreateTemp(dir, program+"-*.tmp")
	if err != nil {
		tb.Fatalf("benchtrace: %v", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	var stderr strings.Builder
	_, err = recorder.Record(context.Background(), recorder.Options{
		Program: Program(program), Args: args, Output: tmp.Name(), Force: true, Hash: hash,
		Stdout: io.Discard, Stderr: &stderr,
	})
	if err != nil {
		tb.Fatalf("benchtrace: recording %s %v: %v\n%s", program, args, err, stderr.String())
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		tb.Fatalf("benchtrace: %v", err)
	}
	return path
}
