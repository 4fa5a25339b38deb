// Package mpitest holds what tests that run real MPI programs share.
package mpitest

import (
	"os"
	"os/exec"
	"testing"
)

// RequireMPI skips the test when mpicc or mpirun is not on PATH, unless the
// environment variable CI is set: then the test fails, so that a CI machine
// without MPI cannot pass by skipping.
func RequireMPI(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"mpicc", "mpirun"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not on PATH, and CI is set: MPI tests must run (install openmpi-bin and libopenmpi-dev)", tool)
			}
			t.Skipf("skipping: %s not on PATH (install openmpi-bin and libopenmpi-dev to run the MPI tests)", tool)
		}
	}
}

// Env is what mpirun needs in tests on top of the environment: running as
// root is allowed (containers and CI runners refuse it otherwise), more ranks
// than cores are allowed, and ranks that poll yield, so that jobs sharing
// few cores do not starve each other (it changes no outcome).
func Env() []string {
	return []string{
		"OMPI_ALLOW_RUN_AS_ROOT=1",
		"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1",
		"OMPI_MCA_mpi_yield_when_idle=1",
	}
}

// RunEnv is the environment of an mpirun in tests: this process's, and Env.
func RunEnv() []string {
	return append(os.Environ(), Env()...)
}

// TestPML is the point-to-point layer the tests' MPI jobs use: ob1, the one
// Open MPI selects for ranks on one host. Naming it spares every job the
// probe of the others (UCX's and the cm layer's), which took over half of
// a small job's wall time (0.47 s -> 0.21 s for mpirun -n 2 of a program
// that sends one message, measured with /usr/bin/time on the 2-core VM).
// It changes no outcome: ob1 is what was selected.
const TestPML = "ob1"

// UseTestPML sets OMPI_MCA_pml to TestPML in this process's environment,
// which every mpirun the tests start inherits (and passes on to its
// ranks), unless the caller's environment names a layer. For TestMain,
// before the tests run.
func UseTestPML() {
	if _, ok := os.LookupEnv("OMPI_MCA_pml"); !ok {
		os.Setenv("OMPI_MCA_pml", TestPML)
	}
}
