package recorder

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// IsTorchrun reports whether program with args is a torchrun command line:
// torchrun itself, or a Python interpreter running
// -m torch.distributed.run or -m torch.distributed.launch. RecordTorchrun
// records those.
func IsTorchrun(program string, args []string) bool {
	_, ok := torchrunOptions(program, args)
	return ok
}

// torchrunOptions returns torchrun's own arguments (its options, the
// script and the script's arguments) of a torchrun command line.
func torchrunOptions(program string, args []string) ([]string, bool) {
	base := filepath.Base(program)
	if base == "torchrun" {
		return args, true
	}
	if strings.HasPrefix(base, "python") && len(args) >= 2 && args[0] == "-m" &&
		(args[1] == "torch.distributed.run" || args[1] == "torch.distributed.launch") {
		return args[2:], true
	}
	return nil, false
}

// torchrunFlags are torchrun's options that take no value (torch 1.13 and
// later spellings); every other option takes one.
var torchrunFlags = map[string]bool{
	"--standalone": true, "-m": true, "--module": true, "--no_python": true, "--no-python": true,
	"--run_path": true, "--run-path": true, "--use_env": true, "--use-env": true,
	"--virtual-local-rank": true, "-h": true, "--help": true,
}

// torchrunRanks is the number of ranks a torchrun command line starts:
// --nproc_per_node (or --nproc-per-node, or torchrun's environment default
// PET_NPROC_PER_NODE; 1 without any), which must agree with ranks when
// ranks > 0 (-n) and is taken from it when torchrun would decide (auto,
// cpu, gpu). --nnodes must be 1 (or 1:1): p2ptrace watches one node's ranks.
func torchrunRanks(opts []string, ranks int, getenv func(string) string) (int, error) {
	nproc, nnodes := getenv("PET_NPROC_PER_NODE"), getenv("PET_NNODES")
	nprocFlag, nnodesFlag := "PET_NPROC_PER_NODE", "PET_NNODES"
	for i := 0; i < len(opts); i++ {
		a := opts[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			break // the script: the rest are its arguments
		}
		name, val, hasVal := strings.Cut(a, "=")
		if torchrunFlags[name] {
			continue
		}
		if !hasVal {
			if len(name) > 2 && name[1] != '-' { // -r1: a short option and its value
				name, val = name[:2], name[2:]
			} else if i+1 < len(opts) {
				i++
				val = opts[i]
			}
		}
		switch name {
		case "--nproc_per_node", "--nproc-per-node":
			nproc, nprocFlag = val, name
		case "--nnodes":
			nnodes, nnodesFlag = val, name
		}
	}
	if nnodes != "" && nnodes != "1" && nnodes != "1:1" {
		return 0, fmt.Errorf("%w: torchrun %s %s: p2ptrace record watches the ranks of one node: give --nnodes 1; "+
			"a job across nodes is recorded as an MPI job launched by hand is: every node's ranks write their segments "+
			"into one shared directory (P2PTRACE_SEGDIR) and 'p2ptrace merge DIR' makes the trace (README, Many hosts)", ErrUsage, nnodesFlag, nnodes)
	}
	if nproc == "" {
		nproc, nprocFlag = "1", "--nproc_per_node (default)"
	}
	n, err := strconv.Atoi(nproc)
	switch {
	case err != nil && (nproc == "auto" || nproc == "cpu" || nproc == "gpu"):
		if ranks < 1 {
			return 0, fmt.Errorf("%w: torchrun %s %s: p2ptrace cannot tell how many ranks that starts: give the number with -n N too", ErrUsage, nprocFlag, nproc)
		}
		return ranks, nil
	case err != nil || n < 1:
		return 0, fmt.Errorf("%w: torchrun %s %q: want a number of ranks", ErrUsage, nprocFlag, nproc)
	case ranks > 0 && ranks != n:
		return 0, fmt.Errorf("%w: -n %d, but torchrun %s %s starts %d ranks", ErrUsage, ranks, nprocFlag, nproc, n)
	}
	return n, nil
}

// RecordTorchrun records a torchrun command line (IsTorchrun: o.Program
// and o.Args) as RecordTorch records its own ranks: p2ptrace runs that very
// command, in a session of its own, with the Python recorder first on
// PYTHONPATH (torchrun passes its environment on to its workers, and sets
// their RANK, WORLD_SIZE and MASTER_* itself), watches the workers with the
// MPI hang monitor and merges their segments. The rank count is torchrun's
// --nproc_per_node; o.Ranks, if set, must agree. torchrun itself imports the
// recorder too, but never initializes a process group, so it records
// nothing. On a hang torchrun and every worker are ended.
func RecordTorchrun(ctx context.Context, o MPIOptions) (*Summary, error) {
	opts, ok := torchrunOptions(o.Program, o.Args)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not torchrun (nor python -m torch.distributed.run)", ErrUsage, o.Program)
	}
	if o.Ranks < 0 {
		return nil, fmt.Errorf("%w: -n %d: want at least one rank", ErrUsage, o.Ranks)
	}
	n, err := torchrunRanks(opts, o.Ranks, os.Getenv)
	if err != nil {
		return nil, err
	}
	o.Ranks = n
	if err := checkMPIOptions(&o); err != nil {
		return nil, err
	}
	exe, err := exec.LookPath(o.Program)
	if err != nil {
		return nil, fmt.Errorf("%w: no such program: %s", ErrUsage, o.Program)
	}
	return recordPython(ctx, o, pythonLaunch{
		path: exe,
		args: o.Args,
		what: fmt.Sprintf("%s %s (%d ranks)", exe, strings.Join(o.Args, " "), n),
		hint: torchrunHint,
	})
}

// torchrunHint recognizes, in the tail of a failed torchrun's stderr,
// Debian's torchrun 1.13 under Python 3.11 failing before it starts a
// worker: there Std.from_str returns None for 0 (the default of --redirects
// and --tee) and for several streams (3), and to_map fails on it.
func torchrunHint(stderrTail string) string {
	if strings.Contains(stderrTail, "in to_map") && strings.Contains(stderrTail, "AttributeError: 'NoneType' object has no attribute 'get'") {
		return "this torchrun (torch 1.13 under Python 3.11) fails at start unless --redirects and --tee each name one stream: " +
			"give it --redirects 1 --tee 1 (the workers' stdout through torchrun, prefixed by rank, their stderr as is)"
	}
	return ""
}
