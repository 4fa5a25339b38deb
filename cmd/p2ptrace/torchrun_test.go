package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/pytest"
)

// torchrun is Debian's (python3-torch).
const torchrun = "/usr/bin/torchrun"

// torchrunJob is a torchrun command line for testdata/torch/name.py with 2
// workers, as the README gives it: Debian's workaround flags, and a static
// rendezvous on a free port (--standalone's port is fixed, and the recorder
// package's tests use it meanwhile).
func torchrunJob(t *testing.T, name string, workaround bool) []string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "torch", name+".py"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := []string{torchrun, "--nproc_per_node", "2", "--master_port", fmt.Sprint(port)}
	if workaround {
		args = append(args, "--redirects", "1", "--tee", "1")
	}
	return append(args, script)
}

// TestRecordTorchrunCommand: `record -- torchrun ...` records torchrun's
// workers: head-to-head sends are a deadlock found live, naming both
// ranks' .py line (exit 1), and check finds it in the trace.
func TestRecordTorchrunCommand(t *testing.T) {
	t.Parallel()
	pytest.RequireTorch(t)
	db := filepath.Join(t.TempDir(), "t.db")
	code, out, stderr := runCmd(t, append([]string{"record", "-o", db, "--hang-timeout", "2s", "--"}, torchrunJob(t, "headtohead", true)...)...)
	if code != exitFindings || !strings.Contains(out, "recorded "+db+": 2 ranks") || !strings.Contains(out, "status hung") ||
		!strings.Contains(out, "[1] deadlock (cause: program)\n    no rank can progress; wait-for cycle: rank 0 -> rank 1 -> rank 0") ||
		strings.Count(out, "headtohead.py:11") < 2 {
		t.Fatalf("record: exit %d, want 1 and the deadlock at headtohead.py:11 of both ranks:\n%s\n%s", code, out, stderr)
	}
	code, out, _ = runCmd(t, "check", db)
	if code != exitFindings || !strings.Contains(out, "deadlock") || !strings.Contains(out, "headtohead.py:11") {
		t.Fatalf("check: exit %d, want 1 and the deadlock at headtohead.py:11:\n%s", code, out)
	}
}

// TestRecordTorchrunDebianFailure: Debian's torchrun 1.13 under Python 3.11
// fails at start without --redirects and --tee; p2ptrace's error says what
// to add. (A torchrun that starts without them records the program.)
func TestRecordTorchrunDebianFailure(t *testing.T) {
	t.Parallel()
	pytest.RequireTorch(t)
	db := filepath.Join(t.TempDir(), "t.db")
	code, out, stderr := runCmd(t, append([]string{"record", "-o", db, "--"}, torchrunJob(t, "ordered", false)...)...)
	if code == exitOK && strings.Contains(out, "status complete") {
		return // not the failing torchrun
	}
	if code != exitFindings || !strings.Contains(stderr, "no rank recorded anything: this torchrun (torch 1.13 under Python 3.11) fails at start") ||
		!strings.Contains(stderr, "give it --redirects 1 --tee 1") {
		t.Fatalf("record: exit %d, want 1 and the --redirects 1 --tee 1 workaround:\n%s\n%s", code, out, stderr)
	}
}

// TestRecordTorchrunUsageErrors: what p2ptrace cannot record of a torchrun
// command line, or flags that do not apply to it, are usage errors (exit
// 2), said before anything runs.
func TestRecordTorchrunUsageErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"two nodes", []string{"record", "-o", db, "--", torchrun, "--nnodes", "2", "--nproc_per_node", "2", "train.py"},
			"torchrun --nnodes 2: p2ptrace record watches the ranks of one node: give --nnodes 1; a job across nodes is recorded as an MPI job launched by hand is"},
		{"-n disagrees", []string{"record", "-n", "4", "-o", db, "--", "/usr/bin/python3", "-m", "torch.distributed.run", "--nproc_per_node", "2", "train.py"},
			"-n 4, but torchrun --nproc_per_node 2 starts 2 ranks"},
		{"-n negative", []string{"record", "-n", "-1", "-o", db, "--", torchrun, "--nproc_per_node", "2", "train.py"},
			"-n -1: want at least one rank"},
		{"--launcher", []string{"record", "-n", "2", "--launcher", "torch", "-o", db, "--", torchrun, "--nproc_per_node", "2", "train.py"},
			"--launcher does not apply to a torchrun command line: torchrun is the launcher, run as given"},
		{"--mpi-args", []string{"record", "--mpi-args", "-x A", "-o", db, "--", torchrun, "train.py"},
			"--mpi-args does not apply to a torchrun command line"},
		{"--seed", []string{"record", "--seed", "3", "-o", db, "--", torchrun, "train.py"},
			"--seed applies to programs on package gpu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestRecordHelpShowsTorchrun: --help gives the torchrun form, with
// Debian's workaround flags.
func TestRecordHelpShowsTorchrun(t *testing.T) {
	code, out, _ := runCmd(t, "record", "--help")
	if code != exitOK || !strings.Contains(out, "p2ptrace record -o t.db -- torchrun --standalone --nproc_per_node 2 --redirects 1 --tee 1 train.py") ||
		!strings.Contains(out, "Debian's torchrun 1.13 under Python 3.11 fails at start unless given\n--redirects 1 --tee 1") {
		t.Fatalf("exit %d, help:\n%s", code, out)
	}
}
