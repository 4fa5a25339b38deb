package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

type verifyOptions struct {
	Path string
}

func newVerifyCmd(f *factory) *cobra.Command {
	opts := &verifyOptions{}
	return &cobra.Command{
		Use:   "verify <trace>",
		Short: "Check a trace file for damage",
		Long: `Verify checks the whole trace: the bbolt structure, every block's checksum
and encoding, and the event counts against the header. It exits 0 on a sound
trace and 2, saying what is damaged, on a damaged one.`,
		Example: `  p2ptrace verify run.p2ptrace`,
		Args:    exactArgs(1, "one trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			return runVerify(f, opts)
		},
	}
}

func runVerify(f *factory, opts *verifyOptions) error {
	r, err := openTrace(opts.Path)
	if err != nil {
		return err
	}
	defer r.Close()
	res, err := r.VerifyResult()
	if err != nil {
		return inputError(err)
	}
	fmt.Fprintf(f.Out, "%s: sound (%d events, %d blocks)", opts.Path, res.Events, res.Blocks)
	if r.Incomplete() {
		fmt.Fprint(f.Out, "; incomplete: the recording was cut short")
	}
	fmt.Fprintln(f.Out)
	return nil
}
