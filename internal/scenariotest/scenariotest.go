// Package scenariotest holds what the tests of several packages need to run
// the scenario programs of testdata/train: the module root, one build of all
// programs, and the file:line of a culprit marked in a program's source.
package scenariotest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// Build builds every program under testdata/train into a temporary folder
// (one go build for all) and returns the folder.
func Build(t testing.TB, root string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "testdata", "train"))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, e := range entries {
		if e.IsDir() {
			args = append(args, "./testdata/train/"+e.Name())
		}
	}
	if len(args) < 4 {
		t.Fatal("no programs under testdata/train")
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
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
