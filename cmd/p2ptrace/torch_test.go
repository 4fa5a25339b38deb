package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/pytest"
)

// TestRecordTorchFlagErrors: --launcher values and misuse are usage errors.
func TestRecordTorchFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"launcher without -n", []string{"record", "--launcher", "torch", "/usr/bin/python3", "x.py"}, "--launcher applies to MPI programs: give the number of ranks with -n"},
		{"unknown launcher", []string{"record", "-n", "2", "--launcher", "srun", "./prog"}, `--launcher "srun": want mpirun or torch`},
		{"no interpreter", []string{"record", "-n", "2", "--launcher", "torch", "-o", filepath.Join(t.TempDir(), "t.db"), "--", "/no/such/python3", "x.py"}, "no such program: /no/such/python3"},
		{"unknown rules", []string{"check", "--rules", "ucc", "x.db"}, `--rules: unknown rules "ucc": want nccl, gloo or mpi`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestRecordTorchThenCheck: the README's commands on a program where gloo
// and NCCL differ: both ranks isend then irecv. record (gloo) is clean,
// exit 0; check (NCCL's rules by default) finds the deadlock, exit 1;
// check --rules gloo finds nothing, exit 0; replay likewise.
func TestRecordTorchThenCheck(t *testing.T) {
	t.Parallel()
	pytest.RequireTorch(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "torch", "isend_irecv_headtohead.py"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "t.db")
	code, out, stderr := runCmd(t, "record", "-n", "2", "--launcher", "torch", "-o", db, "--", pytest.Python, script)
	if code != exitOK || !strings.Contains(out, "2 ranks") || !strings.Contains(out, "status complete") {
		t.Fatalf("record: exit %d\n%s\n%s", code, out, stderr)
	}
	// The tensors' device, per rank (a trace event has no device field).
	code, out, _ = runCmd(t, "show", db)
	if code != exitOK || !strings.Contains(out, "devices:") || !strings.Contains(out, "rank 0 cpu, rank 1 cpu") {
		t.Fatalf("show: exit %d, want the ranks' tensor devices (cpu):\n%s", code, out)
	}
	code, out, _ = runCmd(t, "check", db)
	if code != exitFindings || !strings.Contains(out, "[1] deadlock (cause: program)\n    no rank can progress; wait-for cycle: rank 0 -> rank 1 -> rank 0") ||
		!strings.Contains(out, "isend_irecv_headtohead.py:12") {
		t.Fatalf("check: exit %d, want 1 and the NCCL deadlock at isend_irecv_headtohead.py:12:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "check", "--rules", "gloo", db)
	if code != exitOK {
		t.Fatalf("check --rules gloo: exit %d, want 0:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "replay", db)
	if code != exitFindings || !strings.Contains(out, "deadlock") {
		t.Fatalf("replay: exit %d, want 1 and the NCCL deadlock:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "replay", "--rules", "mpi", db)
	if code != exitOK {
		t.Fatalf("replay --rules mpi: exit %d, want 0:\n%s", code, out)
	}
}
