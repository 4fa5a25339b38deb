package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/p2ptrace/p2ptrace/recorder"

	"github.com/p2ptrace/p2ptrace/internal/bugview"
	"github.com/p2ptrace/p2ptrace/replay"
)

type checkOptions struct {
	json      bool
	maxForced int
	maxReruns int
	noRerun   bool
	strict    bool

	polls int
	html  string
	rules string
}

func newCheckCmd(f *factory) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [--json] [--max-forced N] [--max-reruns N] [--no-rerun] [--strict] [--html FILE] TRACE",
		Short: "Run the standard battery of replays on a trace: what a user runs in CI",
		Long: fmt.Sprintf(`Replay TRACE as recorded, under sync (zero buffering), under mutate
(in-flight send buffers read at the latest legal moment), under delay over %d
seeds, and once for every alternative match of each AnySource receive: the receive is forced to match another rank
that sent it a message it accepts (one receive at a time; an MPI_Probe or an
MPI_Iprobe from MPI_ANY_SOURCE that found a message likewise, the receive that
took the probed message following it; a forced match that
is no legal execution is dropped; a finding it shows is revealed by
"--force-match RANK:SEQ=SRC", which replay takes to reproduce it). At most %d
forced replays run (--max-forced sets another cap: each replays the whole
trace, so lower it for a big trace in CI); the report says when the cap cut
the enumeration short, and then each rank's messages also arrive late in
turn. Each ready send (Rsend, Irsend) is replayed once more with the rank of
its receive held back just before the receive (up to %d such replays): MPI
wants the receive posted before the send starts whatever the timing, so a
send that still starts first is a ready-without-recv, revealed by
"--hold-post RANK:SEQ", which replay takes too.

A message race is a finding when the other order hangs or errs in the model
replay. When the model replays it cleanly, only the program can say what it
does with the data: check re-runs the recorded program (p2ptrace record notes
how: program, arguments, directory, and the executable's hash) with that one
match forced (record --force-match; an MPI job runs again under mpirun, the
shim pinning that MPI_ANY_SOURCE receive or probe to the other sender; a
probe's race is always judged so: the model cannot know what the program does
with the message a probe found). A failed re-run (non-zero exit, crash,
hang, or findings the recording did not have) is a message-race finding with
the evidence; receives whose re-runs were all clean are a note. Each pair
of (receive line, other sender's line) is re-run once, then, while under
--max-reruns (default %d), each further sender rank of a pair (senders of
one line may send different data); each costs one run of the program. When the program
changed or is gone, for torch traces (not yet supported), or with --no-rerun,
such a race is reported as unconfirmed (a note; --strict makes it a finding).

Print the findings deduplicated: first those the recording itself made
(a crash, an in-flight mutation, the hang a live run stopped at), then the
battery's. For a trace cut short, the report says where each unfinished
rank's record ends: what was pending there is not a finding. With --html
FILE, also write them as the page of 'p2ptrace export --format html'
(replacing FILE).

Exit status: 0 no findings, 1 findings, 2 usage or input error.`, replay.DelaySeeds, replay.MaxForcedReplays, replay.MaxHeldReplays, replay.MaxReruns),
		Example: `  p2ptrace record -o trace.db ./train && p2ptrace check trace.db
  p2ptrace check --json trace.db | jq '.findings[].kind'
  p2ptrace check --max-forced 16 big.db
  p2ptrace check --no-rerun --strict race.db
  p2ptrace check --html report.html trace.db
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
			if o.maxReruns < 1 {
				return usageErrorf("--max-reruns %d: want at least 1 re-run (--no-rerun turns them off)", o.maxReruns)
			}
			tr, err := openReplay(f, args[0])
			if err != nil {
				return err
			}
			defer tr.Close()
			setRules(tr, rules)
			copts := replay.CheckOptions{MaxForced: o.maxForced, MaxReruns: o.maxReruns, Strict: o.strict, NoRerun: "--no-rerun"}
			if !o.noRerun {
				copts.Rerun, copts.NoRerun = recorder.Rerunner(context.Background(), tr)
			}
			copts.PollLimit = o.polls
			bar := newProgress(f, 0, "checking", o.json) // the total is known once the alternatives are
			copts.Progress = bar.count
			rep, err := replay.CheckTrace(tr, copts)
			bar.finish()
			if err != nil {
				return inputError(fmt.Errorf("checking %s: %w", args[0], err))
			}
			if o.html != "" {
				m, err := buildPicture(tr, args[0], rep.Findings, "p2ptrace check")
				if err != nil {
					return err
				}
				if err := writeOutput(f, o.html, func(w io.Writer) error { return bugview.WriteHTML(w, m) }); err != nil {
					return err
				}
			}
			return printReportOf(f.Out, *rep, o.json)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&o.html, "html", "", "also write the findings as a self-contained HTML page to this file")
	cmd.Flags().IntVar(&o.maxForced, "max-forced", replay.MaxForcedReplays, "the most forced-match replays to run")
	cmd.Flags().IntVar(&o.maxReruns, "max-reruns", replay.MaxReruns, "the most re-runs of the program to judge races")
	cmd.Flags().BoolVar(&o.noRerun, "no-rerun", false, "never re-run the program: races only a re-run could judge are unconfirmed")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "report unconfirmed races as findings")
	cmd.Flags().IntVar(&o.polls, "poll-limit", 0, "fruitless polls in a row after which a rank waits for the world to change (0: the default, 1000; negative: never)")
	addRulesFlag(cmd, &o.rules)
	return cmd
}
