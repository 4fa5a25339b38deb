package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/p2ptrace/p2ptrace/recorder"
)

type recordOptions struct {
	output   string
	force    bool
	payloads bool
	hash     string
	eager    int64
	seed     uint64
}

func newRecordCmd(f *factory) *cobra.Command {
	o := &recordOptions{}
	cmd := &cobra.Command{
		Use:   "record [flags] [--] PROGRAM [ARGS...]",
		Short: "Run a program built on gpu and record every call and transfer into a trace",
		Long: `Run PROGRAM (a Go main package directory, built into a temporary directory,
or an executable) with recording switched on, and print a summary of the trace.

Exit status: 0 clean, 1 findings or the program failed, 2 usage or input error.`,
		Example: `  p2ptrace record ./testdata/train/pingpong
  p2ptrace record -o ring.db --hash sample ./testdata/train/ring -- -ranks 16 -iters 1000
  p2ptrace record --eager 0 --seed 7 ./train`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("%s: want PROGRAM [ARGS...]\nRun '%s --help' for usage.", cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := recorder.Options{Program: args[0], Args: args[1:], Output: o.output, Force: o.force,
				Payloads: o.payloads, Hash: o.hash, Eager: o.eager, Stdout: f.Out, Stderr: f.Err}
			if cmd.Flags().Changed("seed") {
				opts.Seed = &o.seed
			}
			sum, err := recorder.Record(context.Background(), opts)
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
		},
	}
	cmd.Flags().SetInterspersed(false) // flags after PROGRAM are its own
	cmd.Flags().StringVarP(&o.output, "output", "o", "trace.db", "trace file to write")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite the trace file if it exists")
	cmd.Flags().BoolVar(&o.payloads, "payloads", false, "store payloads (size-capped) so reports can show values")
	cmd.Flags().StringVar(&o.hash, "hash", "full", "payload hashing: full, sample or off")
	cmd.Flags().Int64Var(&o.eager, "eager", 0, "eager limit in bytes (0: the program's own)")
	cmd.Flags().Uint64Var(&o.seed, "seed", 0, "scheduler seed (default: the program's own)")
	return cmd
}
