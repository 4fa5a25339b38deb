package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/p2ptrace/p2ptrace/faults"
	"github.com/p2ptrace/p2ptrace/replay"
)

type replayOptions struct {
	faults  []string
	force   string
	hold    string
	seed    uint64
	explore int
	json    bool
	polls   int
	rules   string
}

func newReplayCmd(f *factory) *cobra.Command {
	o := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay [--fault SPEC]... [--seed N] [--explore N] [--force-match RANK:SEQ=SRC] [--hold-post RANK:SEQ] [--json] TRACE",
		Short: "Rerun a trace deterministically under injected faults and report what goes wrong",
		Long: `Replay TRACE on the simulation engine under the given faults. With --explore N,
replay N seeds (starting at --seed) and report each finding once, with the
first seed that shows it. The same trace, faults and seed print the same bytes.
With --force-match RANK:SEQ=SRC, rank RANK's AnySource receive op SEQ may only
match a send of rank SRC (what check does for each alternative match; a choice
that is no legal execution shows as a hang). SEQ may be an AnySource probe:
it finds SRC's message, and the receive that took the probed message when
recorded takes SRC's. With --hold-post RANK:SEQ, rank RANK waits just before
its op SEQ until every other rank has gone as far as it can without it (what
check does to judge each ready send: the ready send that still comes before
its receive's post is reported).

Exit status: 0 no findings, 1 findings, 2 usage or input error.

` + faults.HelpText,
		Example: `  p2ptrace replay trace.db
  p2ptrace replay --fault sync trace.db
  p2ptrace replay --fault delay:rank=1,max=5ms,p=0.3 --explore 100 trace.db
  p2ptrace replay --fault drop:src=0,dst=1,tag=3,nth=2 --json trace.db
  p2ptrace replay --force-match 0:0=2 trace.db
  p2ptrace replay --hold-post 1:0 trace.db`,
		Args: exactArgs(1, "one trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			specs, err := faults.ParseAll(o.faults)
			if err != nil {
				return usageErrorf("%v", err)
			}
			if o.explore < 0 {
				return usageErrorf("--explore %d: want a positive number of seeds", o.explore)
			}
			var force *replay.ForcedMatch
			if o.force != "" {
				fm, err := replay.ParseForcedMatch(o.force)
				if err != nil {
					return usageErrorf("--force-match: %v", err)
				}
				force = &fm
			}
			var hold *replay.HeldPost
			if o.hold != "" {
				h, err := replay.ParseHeldPost(o.hold)
				if err != nil {
					return usageErrorf("--hold-post: %v", err)
				}
				hold = &h
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
			if n := tr.Header().WorldSize; hold != nil && hold.Rank >= n {
				return usageErrorf("--hold-post %s: the trace has ranks 0..%d", hold, n-1)
			}
			setRules(tr, rules)
			base := tr.Config()
			base.Force = force
			base.Hold = hold
			base.PollLimit = o.polls
			n := max(o.explore, 1)
			bar := newProgress(f, n, "replaying", o.json || n == 1)
			fs, err := tr.Explore(base, specs, o.seed, n, 0, bar.set)
			bar.finish()
			if err != nil {
				return inputError(fmt.Errorf("replaying %s: %w", args[0], err))
			}
			ends, err := tr.Ends()
			if err != nil {
				return inputError(fmt.Errorf("reading %s: %w", args[0], err))
			}
			h := tr.Header()
			return printReportOf(f.Out, replay.Report{Findings: fs, Ends: ends, Comms: h.NamedComms(fs)}, o.json)
		},
	}
	cmd.Flags().StringArrayVar(&o.faults, "fault", nil, "fault to inject, KIND[:key=value,...] (repeatable)")
	cmd.Flags().Uint64Var(&o.seed, "seed", 0, "scheduler and fault seed (the first, with --explore)")
	cmd.Flags().IntVar(&o.explore, "explore", 0, "replay this many seeds and deduplicate the findings")
	cmd.Flags().StringVar(&o.force, "force-match", "", "restrict one AnySource receive to one sender: RANK:SEQ=SRC (as check reports)")
	cmd.Flags().StringVar(&o.hold, "hold-post", "", "hold one rank back before one of its calls: RANK:SEQ (as check reports)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the report as JSON")
	cmd.Flags().IntVar(&o.polls, "poll-limit", 0, "fruitless polls in a row after which a rank waits for the world to change (0: the default, 1000; negative: never)")
	addRulesFlag(cmd, &o.rules)
	return cmd
}

// openReplay opens a trace for replay, noting on stderr when it was cut short.
func openReplay(f *factory, path string) (*replay.Trace, error) {
	tr, err := replay.OpenTrace(path)
	if err != nil {
		return nil, inputError(err)
	}
	if tr.Incomplete() {
		fmt.Fprintf(f.Err, "p2ptrace: %s is incomplete: the recording was cut short; replaying what is there\n", path)
	}
	return tr, nil
}

func printReport(w io.Writer, fs []replay.Finding, asJSON bool) error {
	return printReportOf(w, replay.Report{Findings: fs}, asJSON)
}

func printReportOf(w io.Writer, rep replay.Report, asJSON bool) error {
	fs := rep.Findings
	if asJSON {
		js, err := rep.JSON()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\n", js)
	} else {
		fmt.Fprint(w, rep.Text())
	}
	if len(fs) > 0 {
		return findingsError(fmt.Errorf("%d finding(s)", len(fs)))
	}
	return nil
}
