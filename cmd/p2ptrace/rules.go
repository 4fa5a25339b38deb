package main

import (
	"github.com/spf13/cobra"

	"github.com/p2ptrace/p2ptrace/replay"
)

// addRulesFlag adds --rules to a command that replays a trace.
func addRulesFlag(cmd *cobra.Command, rules *string) {
	cmd.Flags().StringVar(rules, "rules", "", "semantics of the point-to-point ops: nccl, or gloo/mpi (as recorded); default nccl for torch.distributed traces, as recorded for the rest")
}

// parseRulesFlag reads a --rules value ("" = the trace's default, returned as "").
func parseRulesFlag(rules string) (replay.Rules, error) {
	if rules == "" {
		return "", nil
	}
	r, err := replay.ParseRules(rules)
	if err != nil {
		return "", usageErrorf("--rules: %v", err)
	}
	return r, nil
}

// setRules applies parsed --rules to an opened trace.
func setRules(tr *replay.Trace, r replay.Rules) {
	if r != "" {
		tr.SetRules(r)
	}
}
