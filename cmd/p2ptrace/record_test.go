package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
)

// TestRecordMPIFlagErrors: flags that do not fit the kind of program, and
// bad values, are usage errors (exit 2) that say what is wrong, before
// anything is built or run.
func TestRecordMPIFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"mpi flag without -n", []string{"record", "--hang-timeout", "3s", "./prog"}, "--hang-timeout applies to MPI programs: give the number of ranks with -n"},
		{"mpirun without -n", []string{"record", "--mpirun", "/opt/mpi/bin/mpirun", "./prog"}, "--mpirun applies to MPI programs"},
		{"segments without -n", []string{"record", "--segments", "/tmp/x", "./prog"}, "--segments applies to MPI programs"},
		{"eager with -n", []string{"record", "-n", "2", "--eager", "0", "./prog"}, "--eager applies to programs on package gpu, not to MPI programs (-n)"},
		{"payloads with -n", []string{"record", "-n", "2", "--payloads", "./prog"}, "--payloads applies to programs on package gpu"},
		{"bad hang timeout", []string{"record", "-n", "2", "--hang-timeout", "0s", "./prog"}, "--hang-timeout 0s: want a positive duration"},
		{"unparsable hang timeout", []string{"record", "-n", "2", "--hang-timeout", "soon", "./prog"}, `invalid argument "soon" for "--hang-timeout"`},
		{"bad quoting in mpi-args", []string{"record", "-n", "2", "--mpi-args", `--host "a,b`, "./prog"}, "--mpi-args"},
		{"zero ranks", []string{"record", "-n", "0", "./prog"}, "-n 0: want at least one rank"},
		{"no program", []string{"record", "-n", "2"}, "want PROGRAM [ARGS...]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestRecordHelpShowsMPIExamples: --help has the MPI form in its examples.
func TestRecordHelpShowsMPIExamples(t *testing.T) {
	code, out, _ := runCmd(t, "record", "--help")
	if code != exitOK || !strings.Contains(out, "p2ptrace record -n 4") || !strings.Contains(out, "--hang-timeout") {
		t.Fatalf("exit %d, help:\n%s", code, out)
	}
}

// TestRecordMPIThenCheck: the README's MPI commands. record -n 2 of the C
// headtohead-small is clean (exit 0: Open MPI buffers the small sends);
// check of its trace finds the sync deadlock on both MPI_Send lines (exit 1).
func TestRecordMPIThenCheck(t *testing.T) {
	mpitest.RequireMPI(t)
	root := scenariotest.ModuleRoot(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "h2h")
	build := exec.Command("mpicc", "-g", "-O0", "-o", exe, "testdata/mpi/headtohead-small.c")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "mpi.db")
	code, stdout, stderr := runCmd(t, "record", "-n", "2", "-o", db, exe)
	if code != exitOK || !strings.Contains(stdout, "2 ranks") || !strings.Contains(stdout, "status complete") {
		t.Fatalf("record: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runCmd(t, "check", db)
	if code != exitFindings {
		t.Fatalf("check: exit %d, want 1\n%s", code, stdout)
	}
	for _, marker := range []string{"send-a", "send-b"} {
		// Sites are relative to the directory mpicc ran in (the module root).
		if line := scenariotest.MPICulprit(t, root, "headtohead-small", marker); !strings.Contains(stdout, line) {
			t.Errorf("check does not name %s:\n%s", line, stdout)
		}
	}
	if !strings.Contains(stdout, "deadlock (cause: program) under sync") || !strings.Contains(stdout, "unsafe-buffering") {
		t.Errorf("check:\n%s", stdout)
	}
}
