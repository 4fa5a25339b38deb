package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/pkg/profile"
	"github.com/spf13/cobra"
)

// factory is what commands share: the IO streams, and the running profile.
type factory struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer

	profiler interface{ Stop() }
	// progressDelay is how long a command runs before it draws progress on
	// a terminal (see progress): a second, so that short ones draw nothing.
	progressDelay time.Duration
}

// stopProfile stops the profile, if one runs. It is safe to call twice.
func (f *factory) stopProfile() error {
	if f.profiler != nil {
		f.profiler.Stop()
		f.profiler = nil
	}
	return nil
}

type rootOptions struct {
	Profile    string
	ProfileDir string
}

var profileModes = map[string]func(*profile.Profile){
	"cpu":   profile.CPUProfile,
	"mem":   profile.MemProfile,
	"block": profile.BlockProfile,
	"mutex": profile.MutexProfile,
}

func profileNames() string {
	var names []string
	for n := range profileModes {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// newRootCmd builds the p2ptrace command tree. Adding a command is one
// AddCommand line.
func newRootCmd(f *factory) *cobra.Command {
	opts := &rootOptions{}
	root := &cobra.Command{
		Use:   "p2ptrace <command> [flags]",
		Short: "Record and replay the point-to-point communication of multi-rank programs",
		Long: `p2ptrace records the Send/Recv communication (MPI or NCCL style) of a
multi-rank program into one trace file, and shows, verifies, exports and
replays it.

Exit status: 0 clean, 1 findings, 2 usage or input errors.`,
		Example: `  p2ptrace record -o run.p2ptrace ./testdata/train/headtohead-small
  p2ptrace check run.p2ptrace
  p2ptrace replay --fault sync run.p2ptrace
  p2ptrace show run.p2ptrace
  p2ptrace verify run.p2ptrace
  p2ptrace export --format chrome -o run.json run.p2ptrace`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return startProfile(f, opts)
		},
		PersistentPostRunE: func(cmd *cobra.Command, args []string) error {
			return f.stopProfile()
		},
	}
	root.PersistentFlags().StringVar(&opts.Profile, "profile", "", "write a profile of p2ptrace itself: "+profileNames())
	root.PersistentFlags().StringVar(&opts.ProfileDir, "profile-dir", ".", "directory for --profile output")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageErrorf("%v\nRun '%s --help' for usage.", err, cmd.CommandPath())
	})
	root.CompletionOptions.DisableDefaultCmd = true

	root.AddCommand(newRecordCmd(f))
	root.AddCommand(newReplayCmd(f))
	root.AddCommand(newCheckCmd(f))
	root.AddCommand(newShowCmd(f))
	root.AddCommand(newVerifyCmd(f))
	root.AddCommand(newExportCmd(f))
	root.AddCommand(newMergeCmd(f), newMPICmd(f))
	return root
}

func startProfile(f *factory, opts *rootOptions) error {
	if opts.Profile == "" {
		return nil
	}
	mode, ok := profileModes[opts.Profile]
	if !ok {
		return usageErrorf("invalid --profile %q: valid values are %s", opts.Profile, profileNames())
	}
	if err := os.MkdirAll(opts.ProfileDir, 0o755); err != nil {
		return inputError(fmt.Errorf("--profile-dir: %w", err))
	}
	f.stopProfile()
	f.profiler = profile.Start(mode, profile.ProfilePath(opts.ProfileDir), profile.NoShutdownHook, profile.Quiet)
	return nil
}

// exactArgs is cobra.ExactArgs with a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%s: want %s, got %d arguments\nRun '%s --help' for usage.", cmd.CommandPath(), what, len(args), cmd.CommandPath())
		}
		return nil
	}
}
