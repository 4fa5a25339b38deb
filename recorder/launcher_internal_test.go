package recorder

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestLauncherError pins what a launcher's exit says about the program, for
// mpirun and torchrun alike: a launcher p2ptrace ended because it outlived
// ranks that all ended cleanly is no program failure (torchrun under load
// was reported "failed: signal: terminated" when only the MPI door had this
// rule); with a crashed rank it is one, and says what happened.
func TestLauncherError(t *testing.T) {
	killed := errors.New("signal: terminated")
	lingered := endReason{lingered: true}
	if err := launcherError(lingered, trace.StatusComplete, killed); err != nil {
		t.Errorf("lingering launcher after a complete run: %v, want nil", err)
	}
	err := launcherError(lingered, trace.StatusCrashed, killed)
	if !errors.Is(err, killed) || !strings.Contains(err.Error(), "the launcher did not exit and p2ptrace ended it") {
		t.Errorf("lingering launcher after a crash: %v", err)
	}
	if err := launcherError(endReason{}, trace.StatusComplete, killed); err != killed {
		t.Errorf("launcher that failed by itself: %v, want %v", err, killed)
	}
	if err := launcherError(lingered, trace.StatusCrashed, nil); err != nil {
		t.Errorf("no launcher error: %v", err)
	}
}

// TestNoModuleHint: ranks whose interpreter has no torch (or mpi4py) fail
// before recording; the recorder's sitecustomize.py (or the program's
// traceback) says why on stderr, and the error names the interpreter and
// the one that has the module.
func TestNoModuleHint(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("python", "sitecustomize.py"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `"p2ptrace: cannot record torch.distributed: %s\n" % e`) {
		t.Fatal("sitecustomize.py no longer writes the ImportError that noModuleHint looks for")
	}
	tail := "Traceback...\np2ptrace: cannot record torch.distributed: No module named 'torch'\nModuleNotFoundError: No module named 'torch'\n"
	want := "/opt/py/bin/python3 cannot import torch: give an interpreter that can (Debian's python3-torch installs it for /usr/bin/python3)"
	if got := noModuleHint(tail, "torch", "/opt/py/bin/python3"); got != want {
		t.Errorf("hint %q, want %q", got, want)
	}
	tail = "    from mpi4py import MPI\nModuleNotFoundError: No module named 'mpi4py'\n---------\nmpirun detected that one or more processes exited"
	want = "/opt/py/bin/python3 cannot import mpi4py: give an interpreter that can (Debian's python3-mpi4py installs it for /usr/bin/python3)"
	if got := noModuleHint(tail, "mpi4py", "/opt/py/bin/python3"); got != want {
		t.Errorf("hint %q, want %q", got, want)
	}
	if got := noModuleHint("SyntaxError: invalid syntax\n", "torch", "/usr/bin/python3"); got != "" {
		t.Errorf("hint of another failure: %q", got)
	}
}
