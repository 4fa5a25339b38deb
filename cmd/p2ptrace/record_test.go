package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
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
	exe := buildMPIProgram(t, root, dir, "headtohead-small")
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

// buildMPIProgram compiles testdata/mpi/NAME.c into dir with mpicc, from
// the module root, so that its sites read testdata/mpi/NAME.c:LINE.
func buildMPIProgram(t *testing.T, root, dir, name string) string {
	t.Helper()
	exe := filepath.Join(dir, name)
	build := exec.Command("mpicc", "-g", "-O0", "-o", exe, "testdata/mpi/"+name+".c")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("mpicc %s: %v\n%s", name, err, out)
	}
	return exe
}

// TestCheckNamesCommunicators: check's findings name a communicator of an
// MPI job by its id (a hash), and the report then says who its members are
// and which call made it, at the program's line.
func TestCheckNamesCommunicators(t *testing.T) {
	mpitest.RequireMPI(t)
	root := scenariotest.ModuleRoot(t)
	dir := t.TempDir()
	exe := buildMPIProgram(t, root, dir, "coll-comm-order")
	src, err := os.ReadFile(filepath.Join(root, "testdata/mpi/coll-comm-order.c"))
	if err != nil {
		t.Fatal(err)
	}
	dupLine := 1 + strings.Count(string(src[:strings.Index(string(src), "MPI_Comm_dup(")]), "\n")
	db := filepath.Join(dir, "cco.db")
	if code, stdout, stderr := runCmd(t, "record", "-n", "2", "-o", db, exe, "bcast"); code != exitOK {
		t.Fatalf("record: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ := runCmd(t, "check", db)
	legend := regexp.MustCompile(fmt.Sprintf("\ncommunicators named above \\(their members' world ranks\\):\n    comm (\\d+): ranks 0, 1, made by MPI_Comm_dup at testdata/mpi/coll-comm-order\\.c:%d\n", dupLine))
	m := legend.FindStringSubmatch(stdout)
	if code != exitFindings || m == nil {
		t.Fatalf("check: exit %d, want 1 and the legend %s:\n%s", code, legend, stdout)
	}
	if named := "Bcast root 0 on comm " + m[1] + " (4 bytes)"; !strings.Contains(stdout, named) {
		t.Errorf("check does not name %q:\n%s", named, stdout)
	}
}

// recordTrain records testdata/train/NAME from the module root, as a user
// there types it, and returns the exit status, output and trace path.
func recordTrain(t *testing.T, name string, args ...string) (int, string, string, string) {
	t.Helper()
	t.Chdir(scenariotest.ModuleRoot(t))
	db := filepath.Join(t.TempDir(), name+".db")
	code, stdout, stderr := runCmd(t, append([]string{"record", "-o", db, "./testdata/train/" + name}, args...)...)
	return code, stdout, stderr, db
}

// TestRecordReportsFindingsOnce: a deadlock while recording is reported
// once, on stdout, with exit 1; the program's own copy of the report on
// stderr is one line, and its exit status 1 (caused by the deadlock) is no
// second "the program failed" error.
func TestRecordReportsFindingsOnce(t *testing.T) {
	code, stdout, stderr, _ := recordTrain(t, "headtohead-large")
	if code != exitFindings {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	blocked := "rank 0 blocked in Send to rank 1 tag 0 (4194304 bytes) at " + scenariotest.Culprit(t, ".", "headtohead-large", "send-a")
	if !strings.Contains(stdout, blocked) {
		t.Errorf("stdout does not report %q:\n%s", blocked, stdout)
	}
	if n := strings.Count(stdout+stderr, "blocked in Send"); n != 2 {
		t.Errorf("the two blocked sends are named %d times in all, want once each\nstdout:\n%s\nstderr:\n%s", n, stdout, stderr)
	}
	if strings.Contains(stderr, "the program failed") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if !strings.Contains(stderr, "1 finding(s) recorded (deadlock): p2ptrace record prints the report") {
		t.Errorf("stderr has not the program's one line:\n%s", stderr)
	}
}

// TestRecordDashDashAfterProgram: the --help example form "PROGRAM --
// ARGS" gives PROGRAM its arguments without the -- (Go's flag package stops
// at a -- and would ignore -ranks), and the form without -- works the same.
// The trace names the program as the user typed it, and the tool version.
func TestRecordDashDashAfterProgram(t *testing.T) {
	_, help, _ := runCmd(t, "record", "--help")
	if !strings.Contains(help, "./testdata/train/ring -- -ranks 16") || !strings.Contains(help, "A -- right after PROGRAM") {
		t.Fatalf("help:\n%s", help)
	}
	for _, args := range [][]string{{"--", "-ranks", "4", "-iters", "2"}, {"-ranks", "4", "-iters", "2"}} {
		code, stdout, stderr, db := recordTrain(t, "ring", args...)
		if code != exitOK || !strings.Contains(stdout, "4 ranks") {
			t.Fatalf("record ring %v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		code, out, _ := runCmd(t, "show", "--json", db)
		var doc showJSON
		if err := json.Unmarshal([]byte(out), &doc); code != exitOK || err != nil {
			t.Fatalf("show: exit %d, %v\n%s", code, err, out)
		}
		want := []string{"./testdata/train/ring", "-ranks", "4", "-iters", "2"}
		if !reflect.DeepEqual(doc.Command, want) {
			t.Errorf("command %q, want %q (what the user typed)", doc.Command, want)
		}
		if !strings.HasPrefix(doc.ToolVersion, "github.com/p2ptrace/p2ptrace ") {
			t.Errorf("tool_version %q", doc.ToolVersion)
		}
	}
}

// TestRecordNotAProgram: a directory that is no main package, or outside any
// Go module, is a usage error that says what is wrong and what to do.
func TestRecordNotAProgram(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(scenariotest.ModuleRoot(t))
	for _, tc := range []struct{ prog, want string }{
		{"./gpu", "./gpu is package gpu, not a program: give the directory of a main package"},
		{outside, outside + " is not inside a Go module (no go.mod in it or a parent directory): run 'go mod init' there"},
	} {
		code, _, stderr := runCmd(t, "record", "-o", filepath.Join(t.TempDir(), "x.db"), tc.prog)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "exit status") || strings.Contains(stderr, "permission denied") {
			t.Errorf("record %s: exit %d, stderr %q; want exit 2 and %q", tc.prog, code, stderr, tc.want)
		}
	}
}

// TestRecordPythonScript: a Python script given as the program (not
// executable: a user's first try), or as --launcher torch's interpreter,
// is a usage error that gives the command line recording it, for the
// library its imports name, with -n as given.
func TestRecordPythonScript(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	torch := write("train.py", "import torch.distributed as dist\ndist.init_process_group(\"gloo\")\n")
	mpi := write("ring", "#!/usr/bin/env python3\nfrom mpi4py import MPI\n")
	plain := write("notes.py", "print('no library')\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "3", torch}, torch + " is not executable; it is a Python script of torch.distributed: record it with `p2ptrace record -n 3 --launcher torch -- /usr/bin/python3 " + torch + "`"},
		{[]string{torch}, "record it with `p2ptrace record -n N --launcher torch -- /usr/bin/python3 " + torch + "`"},
		{[]string{"-n", "2", mpi}, mpi + " is not executable; it is a Python script of mpi4py: record it with `p2ptrace record -n 2 -- /usr/bin/python3 " + mpi + "`"},
		{[]string{"-n", "2", plain}, "it is a Python script: record torch.distributed with `p2ptrace record -n 2 --launcher torch -- /usr/bin/python3 " + plain + "`, mpi4py with `p2ptrace record -n 2 -- /usr/bin/python3 " + plain + "`"},
		{[]string{"-n", "2", "--launcher", "torch", torch}, torch + " is a Python script, and with --launcher torch PROGRAM is the Python interpreter: record it with `p2ptrace record -n 2 --launcher torch -- /usr/bin/python3 " + torch + "`"},
	} {
		args := append([]string{"record", "-o", filepath.Join(dir, "x.db")}, tc.args...)
		code, _, stderr := runCmd(t, args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
