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
