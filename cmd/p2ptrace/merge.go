package main

import (
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"os"

	"github.com/spf13/cobra"

	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/recorder/mpi"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

type mergeOptions struct {
	Dir    string
	Output string
	Force  bool
}

func newMergeCmd(f *factory) *cobra.Command {
	opts := &mergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge <segment-dir> [flags]",
		Short: "Merge the per-rank segments of a recorded MPI job into one trace",
		Long: `Merge reads the segment files (rank-N.seg) that the p2ptrace MPI shim wrote
into a directory, one per rank, and writes them as one trace file.

Every rank 0..size-1 must have its segment. A rank that was killed keeps
what it recorded; a rank that was blocked in a call when the job ended keeps
that call without its completion (replay shows where it hung).

As after 'p2ptrace record -n', the trace's message then holds what the run
showed: in-flight mutations (payload hashes), and the findings of a replay as
recorded (missing Waits, unmatched sends...).

Exit status: 0 the job completed clean, 1 it crashed (MPI error, MPI_Abort, a
rank ended without MPI_Finalize) or has findings, 2 usage or input error
(missing or damaged segments).`,
		Example: `  mpirun -n 4 -x LD_PRELOAD=$(p2ptrace mpi build-shim) -x P2PTRACE_SEGDIR=segs ./a.out
  p2ptrace merge segs -o run.p2ptrace
  p2ptrace merge segs -o run.p2ptrace --force`,
		Args: exactArgs(1, "one segment directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			return runMerge(f, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "trace.db", "trace file to write")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite the trace file if it exists")
	return cmd
}

func runMerge(f *factory, opts *mergeOptions) error {
	if st, err := os.Stat(opts.Dir); err != nil {
		return inputError(err)
	} else if !st.IsDir() {
		return usageErrorf("%s is not a directory: want the segment directory (%s)", opts.Dir, mpi.EnvSegDir)
	}
	res, err := recorder.MergeMPI(opts.Dir, opts.Output, mpi.MergeOptions{Force: opts.Force}, 0)
	if err != nil {
		return inputError(err)
	}
	sum, err := recorder.Summarize(opts.Output)
	if err != nil {
		return inputError(err)
	}
	h := sum.Header
	fmt.Fprintf(f.Out, "%s: %d ranks, %d events, %s, status %s\n", opts.Output, h.WorldSize, res.Events, h.Backend, h.Status)
	for _, r := range res.Ranks {
		switch r.State {
		case mpi.StateFinalized:
		case mpi.StateBlocked:
			fmt.Fprintf(f.Out, "  rank %d: ended blocked in %s%s\n", r.Rank, r.Blocked, atSite(r.Site))
		case mpi.StateRunning:
			fmt.Fprintf(f.Out, "  rank %d: ended without MPI_Finalize\n", r.Rank)
		default:
			fmt.Fprintf(f.Out, "  rank %d: %s%s: %s\n", r.Rank, r.State, atSite(r.Site), r.Error)
		}
	}
	if len(h.Findings) > 0 {
		rep := verdict.Report{Findings: h.Findings, Comms: h.NamedComms(h.Findings)}
		fmt.Fprintf(f.Out, "findings while recording: %s", rep.Text())
	}
	if h.Message != "" {
		fmt.Fprintf(f.Out, "note: %s\n", h.Message)
	}
	if h.Status != trace.StatusComplete {
		return findingsError(fmt.Errorf("the MPI job did not complete (status %s)", h.Status))
	}
	if len(h.Findings) > 0 {
		return findingsError(errors.New("the recording has findings"))
	}
	return nil
}

func atSite(site string) string {
	if site == "" {
		return ""
	}
	return " at " + site
}
