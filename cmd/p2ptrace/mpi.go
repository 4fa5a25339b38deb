package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/p2ptrace/p2ptrace/recorder/mpi"
)

type buildShimOptions struct {
	MPICC string
	Force bool
}

// newMPICmd is the parent of the commands for real MPI programs.
func newMPICmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mpi <command>",
		Short: "Tools for recording real MPI programs",
		Long: `Commands for recording real MPI programs (C, C++...) with the p2ptrace shim,
an LD_PRELOAD library over the MPI profiling interface (PMPI).`,
		Example: `  p2ptrace mpi build-shim
  p2ptrace mpi build-shim --mpicc /opt/mpich/bin/mpicc`,
		Args: exactArgs(0, "a subcommand"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newBuildShimCmd(f))
	return cmd
}

func newBuildShimCmd(f *factory) *cobra.Command {
	opts := &buildShimOptions{}
	cmd := &cobra.Command{
		Use:   "build-shim [flags]",
		Short: "Build the MPI recording shim and print the path of the shared library",
		Long: `Build-shim compiles the p2ptrace shim with mpicc into the user cache
directory and prints the path of the shared library. The library is rebuilt
only when the shim source, the mpicc flags or the MPI version change.

Exit status: 0 built (or current), 2 no mpicc or the build failed.`,
		Example: `  p2ptrace mpi build-shim
  mpirun -n 2 -x LD_PRELOAD=$(p2ptrace mpi build-shim) -x P2PTRACE_SEGDIR=segs ./a.out`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBuildShim(f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.MPICC, "mpicc", "", "MPI C compiler wrapper (default: mpicc from PATH)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "rebuild even if the cached library is current")
	return cmd
}

func runBuildShim(f *factory, opts *buildShimOptions) error {
	so, err := mpi.BuildShim(context.Background(), mpi.BuildOptions{MPICC: opts.MPICC, Force: opts.Force, Stderr: f.Err})
	if errors.Is(err, mpi.ErrNoMPI) {
		return inputError(err)
	}
	if err != nil {
		return inputError(err)
	}
	fmt.Fprintln(f.Out, so)
	return nil
}
