// Package scenariotest holds what the tests of several packages need to run
// the scenario programs of testdata/train: the module root, one build of all
// programs, and the file:line of a culprit marked in a program's source.
package scenariotest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// ModuleRoot walks up from the test's working directory to go.mod.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

// Build builds every program under testdata/train (one go build for all)
// and returns the folder that holds them. The folder is shared: one per
// module root in the system's temporary directory, so that the test
// binaries of several packages, and the tests of one, link the programs
// once between them (linking them all costs seconds of CPU, and go test
// ./... ran it five times). go build relinks only what is out of date
// (it compares the build IDs of the sources with the binaries'), so a
// changed program is rebuilt as before. Builds into the folder are
// serialized by a lock file beside it, across processes. Treat the folder
// as read-only.
func Build(t testing.TB, root string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "testdata", "train"))
	if err != nil {
		t.Fatal(err)
	}
	key := sha256.Sum256([]byte(root))
	bin := filepath.Join(os.TempDir(), "p2ptrace-scenarios", hex.EncodeToString(key[:8]))
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, e := range entries {
		if e.IsDir() {
			args = append(args, "./testdata/train/"+e.Name())
		}
	}
	if len(args) < 4 {
		t.Fatal("no programs under testdata/train")
	}
	unlock, err := lockFile(bin + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// lockFile takes an exclusive lock on path (created if need be) and returns
// its release: one holder at a time, across processes and goroutines.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

// Culprit returns "testdata/train/NAME/main.go:LINE" for the line of the
// program's source marked "// culprit: MARKER".
func Culprit(t testing.TB, root, name, marker string) string {
	t.Helper()
	rel := "testdata/train/" + name + "/main.go"
	return rel + ":" + fmt.Sprint(MarkerLine(t, filepath.Join(root, rel), marker))
}

// MarkerLine is the line number of the unique line of file ending in "// culprit: MARKER".
func MarkerLine(t testing.TB, file, marker string) int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := "// culprit: " + marker
	found := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.HasSuffix(strings.TrimSpace(sc.Text()), want) {
			if found != 0 {
				t.Fatalf("%s: marker %q on lines %d and %d", file, marker, found, n)
			}
			found = n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatalf("%s: no line marked %q", file, want)
	}
	return found
}
