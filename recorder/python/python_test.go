package python_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/python"
)

// TestInstallWritesTheRecorderOnce: Install writes sitecustomize.py and the
// p2ptrace_rec package into a content-named directory, and a second call
// returns the same directory without rewriting it.
func TestInstallWritesTheRecorderOnce(t *testing.T) {
	cache := t.TempDir()
	dir, err := python.Install(cache)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(dir), "python-") || filepath.Dir(dir) != cache {
		t.Errorf("dir %s, want %s/python-HASH", dir, cache)
	}
	for _, f := range []string{"sitecustomize.py", "p2ptrace_rec/__init__.py", "p2ptrace_rec/torchrec.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	fi, _ := os.Stat(filepath.Join(dir, "sitecustomize.py"))
	again, err := python.Install(cache)
	if err != nil || again != dir {
		t.Fatalf("second Install: %s, %v; want %s", again, err, dir)
	}
	if fi2, _ := os.Stat(filepath.Join(dir, "sitecustomize.py")); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("second Install rewrote the files")
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Errorf("cache holds %d entries, want 1 (no temporary directory left)", len(entries))
	}
}

// TestRecorderIsPlainPython: the recorder compiles under any python3 (no
// torch needed to parse it), and without P2PTRACE_SEGDIR sitecustomize does
// nothing.
func TestRecorderIsPlainPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir, err := python.Install(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", "import sys, sitecustomize, py_compile; py_compile.compile(sys.argv[1], doraise=True); print('ok')", filepath.Join(dir, "p2ptrace_rec", "torchrec.py"))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1")
	cmd.Env = slicesWithout(cmd.Env, "P2PTRACE_SEGDIR=")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("%v: %s", err, out)
	}
}

func slicesWithout(env []string, prefix string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}
