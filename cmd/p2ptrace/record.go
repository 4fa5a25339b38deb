package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kballard/go-shellquote"
	"github.com/spf13/cobra"

	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/replay"
)

type recordOptions struct {
	output   string
	force    bool
	payloads bool
	hash     string
	eager    int64
	seed     uint64
	match    string // --force-match

	// MPI programs (-n).
	ranks       int
	mpirun      string
	mpiArgs     string
	mpicc       string
	hangTimeout time.Duration
	segments    string
	launcher    string // "mpirun" or "torch"

	timeout   time.Duration
	pollLimit int
}

func newRecordCmd(f *factory) *cobra.Command {
	o := &recordOptions{}
	cmd := &cobra.Command{
		Use:   "record [flags] PROGRAM [--] [ARGS...]",
		Short: "Run a program and record every call and transfer into a trace",
		Long: `Run PROGRAM with recording switched on, and print a summary of the trace.

Without -n, PROGRAM (unless torchrun, below) is built on package gpu: a Go
main package directory (built into a temporary directory) or an executable;
its run is simulated, so a deadlock is found at once.

With -n N, PROGRAM is an MPI executable (C or C++) run as N processes
under Open MPI's mpirun with the p2ptrace shim preloaded (built with mpicc on
first use, see 'p2ptrace mpi build-shim'); no source change is needed. Build
it with -g for file:line in reports. Each rank writes a segment and p2ptrace
merges them into one trace. When every rank sits in a blocking MPI call,
polls without success (MPI_Test*, MPI_Iprobe answering no) or has finished,
and none makes another call for --hang-timeout, the job is ended and the
trace is marked hung, with the wait-for cycle or the rank waited on. A rank
whose page faults grow (working inside its call: a library allocating a
large window) is not waiting, for 12 hang timeouts at most.

--timeout D (default off: a long job is not a bug, and hangs and livelocks
are found without it) bounds the run in wall-clock time: a program that
stops calling the runtime (a rank spinning in its own code) is ended with a
no-progress finding naming the rank and its last call, killed with its
process group if it does not end itself.
When running as root, Open MPI's consent variables are set; with more ranks
than cores and no placement in --mpi-args, --oversubscribe is added.

Flags after PROGRAM are its own. A -- right after PROGRAM ends p2ptrace's
arguments and is not passed on (give -- twice to pass one); every other
argument reaches PROGRAM as given.

With -n N --launcher torch, PROGRAM is a Python interpreter with PyTorch and
ARGS its script: p2ptrace starts N ranks as torchrun does (RANK, LOCAL_RANK,
WORLD_SIZE, MASTER_ADDR, a free MASTER_PORT) with its Python recorder on
PYTHONPATH, which records torch.distributed's point-to-point calls with the
script's file:line; hangs are detected as for MPI.

A torchrun command line as PROGRAM (torchrun, or python3 -m
torch.distributed.run) is run as given, with the recorder on the workers'
PYTHONPATH (torchrun sets their RANK, WORLD_SIZE, MASTER_*); its workers are
recorded as above, and a hang ends torchrun and every worker. The rank count
is its --nproc_per_node (-n, if given, must agree); --nnodes must be 1.
Debian's torchrun 1.13 under Python 3.11 fails at start unless given
--redirects 1 --tee 1 (one stream each; its workers' stdout then comes
through torchrun, prefixed by rank).

Exit status: 0 clean, 1 findings or the program failed, 2 usage or input error.`,
		Example: `  p2ptrace record ./testdata/train/pingpong
  p2ptrace record -o ring.db --hash sample ./testdata/train/ring -- -ranks 16 -iters 1000
  p2ptrace record --eager 0 --seed 7 ./train
  p2ptrace record -n 4 -o train.db ./train_mpi --epochs 1
  p2ptrace record -n 8 --mpi-args "--hostfile hosts --map-by node" --hang-timeout 30s ./solver
  p2ptrace record --timeout 10m ./train
  p2ptrace record -n 2 --launcher torch -o t.db -- /usr/bin/python3 train.py
  p2ptrace record -o t.db -- torchrun --standalone --nproc_per_node 2 --redirects 1 --tee 1 train.py`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("%s: want PROGRAM [ARGS...]\nRun '%s --help' for usage.", cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			args = programArgs(args)
			if o.timeout < 0 {
				return usageErrorf("--timeout %v: want a positive duration such as 10m (0: no bound)", o.timeout)
			}
			if recorder.IsTorchrun(args[0], args[1:]) {
				return o.runMPI(cmd, f, args, true)
			}
			if cmd.Flags().Changed("np") {
				return o.runMPI(cmd, f, args, false)
			}
			for _, name := range []string{"mpirun", "mpi-args", "mpicc", "hang-timeout", "segments", "launcher"} {
				if cmd.Flags().Changed(name) {
					return usageErrorf("--%s applies to MPI programs: give the number of ranks with -n", name)
				}
			}
			opts := recorder.Options{Program: args[0], Args: args[1:], Output: o.output, Force: o.force,
				Payloads: o.payloads, Hash: o.hash, Eager: o.eager, ForceMatch: o.match, Stdout: f.Out, Stderr: f.Err,
				Timeout: o.timeout, PollLimit: o.pollLimit}
			if o.match != "" {
				if _, err := replay.ParseForcedMatch(o.match); err != nil {
					return usageErrorf("--force-match: %v", err)
				}
			}
			if cmd.Flags().Changed("seed") {
				opts.Seed = &o.seed
			}
			sum, err := recorder.Record(context.Background(), opts)
			return recordResult(f, sum, err)
		},
	}
	cmd.Flags().SetInterspersed(false) // flags after PROGRAM are its own
	cmd.Flags().StringVarP(&o.output, "output", "o", "trace.db", "trace file to write")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite the trace file if it exists")
	cmd.Flags().BoolVar(&o.payloads, "payloads", false, "store payloads (size-capped) so reports can show values")
	cmd.Flags().StringVar(&o.hash, "hash", "full", "payload hashing: full, sample or off")
	cmd.Flags().Int64Var(&o.eager, "eager", 0, "eager limit in bytes (0: the program's own)")
	cmd.Flags().Uint64Var(&o.seed, "seed", 0, "scheduler seed (default: the program's own)")
	cmd.Flags().StringVar(&o.match, "force-match", "", "restrict one AnySource receive to one sender: RANK:SEQ=SRC (check re-runs programs this way)")
	cmd.Flags().IntVarP(&o.ranks, "np", "n", 0, "MPI: run PROGRAM as this many ranks under mpirun")
	cmd.Flags().StringVar(&o.mpirun, "mpirun", "mpirun", "MPI: the launcher (Open MPI's mpirun)")
	cmd.Flags().StringVar(&o.mpiArgs, "mpi-args", "", "MPI: extra launcher arguments, split like a shell would")
	cmd.Flags().StringVar(&o.mpicc, "mpicc", "mpicc", "MPI: the compiler wrapper that builds the shim")
	cmd.Flags().StringVar(&o.segments, "segments", "", "MPI: keep the ranks' segment files in this directory (one all hosts write, for multi-host jobs)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 0, "end a run that outlives this (a rank spinning in its own code, a program that stops calling the runtime) with a no-progress finding, killing the program if it does not end itself (0: no bound)")
	cmd.Flags().IntVar(&o.pollLimit, "poll-limit", 0, "fruitless polls in a row (Test answering not yet) after which a rank waits for the world to change: a livelock ends as a hang (0: the default, 1000; negative: never)")
	cmd.Flags().DurationVar(&o.hangTimeout, "hang-timeout", recorder.DefaultHangTimeout, "MPI: end the job as hung after this long with every rank blocked")
	cmd.Flags().StringVar(&o.launcher, "launcher", "mpirun", "with -n: mpirun (MPI programs) or torch (torch.distributed: PROGRAM is python3, ARGS its script)")
	return cmd
}

// runMPI records a job of processes: an MPI program under mpirun, a
// torch.distributed program under p2ptrace's launcher (-n, --launcher
// torch) or the user's torchrun command line (torchrun).
func (o *recordOptions) runMPI(cmd *cobra.Command, f *factory, args []string, torchrun bool) error {
	for _, name := range []string{"payloads", "eager", "seed", "poll-limit"} {
		if cmd.Flags().Changed(name) {
			return usageErrorf("--%s applies to programs on package gpu, not to MPI programs (-n)", name)
		}
	}
	if torchrun {
		for _, name := range []string{"launcher", "mpirun", "mpi-args", "mpicc"} {
			if cmd.Flags().Changed(name) {
				return usageErrorf("--%s does not apply to a torchrun command line: torchrun is the launcher, run as given", name)
			}
		}
	}
	if o.hangTimeout <= 0 {
		return usageErrorf("--hang-timeout %v: want a positive duration such as 5s", o.hangTimeout)
	}
	extra, err := shellquote.Split(o.mpiArgs)
	if err != nil {
		return usageErrorf("--mpi-args %q: %v", o.mpiArgs, err)
	}
	mo := recorder.MPIOptions{
		Program: args[0], Args: args[1:], Ranks: o.ranks, MPIRun: o.mpirun, MPIArgs: extra, MPICC: o.mpicc,
		Output: o.output, Force: o.force, Hash: o.hash, HangTimeout: o.hangTimeout, Segments: o.segments, Timeout: o.timeout,
		Stdout: f.Out, Stderr: f.Err, Log: f.Err,
	}
	record := recorder.RecordMPI
	switch {
	case torchrun:
		record = recorder.RecordTorchrun
	case o.launcher == "mpirun":
	case o.launcher == "torch":
		record = recorder.RecordTorch
	default:
		return usageErrorf("--launcher %q: want mpirun or torch", o.launcher)
	}
	sum, err := record(context.Background(), mo)
	return recordResult(f, sum, err)
}

// programArgs drops the -- that separates PROGRAM from its arguments, so
// "record PROG -- -ranks 16" gives PROG "-ranks 16" (Go's flag package stops
// at a --, and would silently ignore the rest).
func programArgs(args []string) []string {
	if len(args) > 1 && args[1] == "--" {
		return append(args[:1:1], args[2:]...)
	}
	return args
}

// recordResult prints the summary and maps the outcome to an exit status.
func recordResult(f *factory, sum *recorder.Summary, err error) error {
	if sum != nil {
		fmt.Fprint(f.Out, sum.Text())
	}
	switch {
	case errors.Is(err, recorder.ErrUsage), errors.Is(err, recorder.ErrNoCalls):
		return inputError(err)
	case errors.Is(err, recorder.ErrProgramFailed):
		return findingsError(err)
	case err != nil:
		return inputError(err)
	case !sum.Clean():
		return findingsError(errors.New("the recording has findings"))
	}
	return nil
}
