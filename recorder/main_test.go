package recorder_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
)

// sharedDir holds what several tests of the package share (see
// sharedHeadtohead); it outlives every test and is removed after them all.
var sharedDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "p2ptrace-recorder-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir = dir
	mpitest.UseTestPML()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
