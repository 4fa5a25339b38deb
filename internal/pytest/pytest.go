// Package pytest holds what tests that run real Python programs share.
package pytest

import (
	"os"
	"os/exec"
	"testing"
)

// Python is the interpreter Debian's python3-torch and python3-mpi4py
// install for: not necessarily the python3 first on PATH.
const Python = "/usr/bin/python3"

// RequireModule skips the test when Python cannot import module, unless
// the environment variable CI is set: then the test fails, so that a CI
// machine without it cannot pass by skipping (see mpitest.RequireMPI).
func RequireModule(t testing.TB, module, pkg string) {
	t.Helper()
	err := exec.Command(Python, "-c", "import "+module).Run()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s cannot import %s (%v), and CI is set: these tests must run (apt-get install %s)", Python, module, err, pkg)
	}
	t.Skipf("skipping: %s cannot import %s (apt-get install %s to run these tests)", Python, module, pkg)
}

// RequireTorch is RequireModule for torch.distributed (python3-torch).
func RequireTorch(t testing.TB) { RequireModule(t, "torch.distributed", "python3-torch") }

// RequireMPI4Py is RequireModule for mpi4py (python3-mpi4py).
func RequireMPI4Py(t testing.TB) { RequireModule(t, "mpi4py.MPI", "python3-mpi4py") }
