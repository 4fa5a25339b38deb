package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/p2ptrace/p2ptrace/replay"
)

type checkOptions struct {
	json      bool
	maxForced int
	rules     string
}

func newCheckCmd(f *factory) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [--json] [--max-forced N] TRACE",
		Short: "Run the standard battery of replays on a trace: what a user runs in CI",
		Long: fmt.Sprintf(`Replay TRACE as recorded, under sync (zero buffering), under mutate
(in-flight send buffers read at the latest legal moment), under delay over %d
seeds, and once for every alternative match of each AnySource receive: the receive is forced to match another rank
that sent it a message it accepts (one receive at a time; a forced match that
is no legal execution is dropped; a finding it shows is revealed by
"--force-match RANK:SEQ=SRC", which replay takes to reproduce it). At most %d
forced replays run (--max-forced sets another cap: each replays the whole
trace, so lower it for a big trace in CI); the report says when the cap cut
the enumeration short, and then each rank's messages also arrive late in
turn. Print the findings deduplicated.

Exit status: 0 no findings, 1 findings, 2 usage or input error.`, replay.DelaySeeds, replay.MaxForcedReplays),
		Example: `  p2ptrace record -o trace.db ./train && p2ptrace check trace.db
  p2ptrace check --json trace.db | jq '.findings[].kind'
  p2ptrace check --max-forced 16 big.db
  p2ptrace check --rules gloo torch.db`,
		Args: exactArgs(1, "one trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.maxForced < 1 {
				return usageErrorf("--max-forced %d: want at least 1 forced replay", o.maxForced)
			}
			rules, err := parseRulesFlag(o.rules)
			if err != nil {
				return err
			}
			tr, err := openReplay(f, args[0])
			if err != nil {
				return err
			}
			defer tr.Close()
			setRules(tr, rules)
			var bar *progress
			res, err := replay.Check(tr.Open, tr.Config(), tr.Site, replay.CheckOptions{MaxForced: o.maxForced, Progress: func(done, total int) {
				if bar == nil {
					bar = newProgress(f.Err, total, "checking", o.json)
				}
				bar.set(done)
			}})
			if bar != nil {
				bar.finish()
			}
			if err != nil {
				return inputError(fmt.Errorf("checking %s: %w", args[0], err))
			}
			return printReportOf(f.Out, replay.Report{Findings: res.Findings, AnySource: &res.AnySource}, o.json)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the report as JSON")
	cmd.Flags().IntVar(&o.maxForced, "max-forced", replay.MaxForcedReplays, "the most forced-match replays to run")
	addRulesFlag(cmd, &o.rules)
	return cmd
}
