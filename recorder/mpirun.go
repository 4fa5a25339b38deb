package recorder

import (
	"context"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/internal/proc"
	"github.com/p2ptrace/p2ptrace/recorder/mpi"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// DefaultHangTimeout is how long every rank of an MPI job must sit in blocking
// MPI calls, poll without success (MPI_Test*, MPI_Iprobe answering no) or be
// finished, without any other call made, before RecordMPI declares the job
// hung.
const DefaultHangTimeout = 5 * time.Second

// pollInterval is how often the monitor reads the ranks' live states.
const pollInterval = 50 * time.Millisecond

// MPIOptions says which MPI program to record and how to launch it.
type MPIOptions struct {
	Program string   // an MPI executable (C or C++, dynamically linked against the MPI library; Fortran's bindings bypass the shim)
	Args    []string // its arguments
	Ranks   int      // processes to launch (mpirun -n)
	MPIRun  string   // the launcher ("" = mpirun from PATH); Open MPI's command line
	MPIArgs []string // extra launcher arguments, before the program
	MPICC   string   // the compiler wrapper that builds the shim ("" = mpicc from PATH)
	Output  string   // trace path ("" = trace.db)
	Force   bool     // overwrite Output
	Hash    string   // full, sample, off ("" = full)
	// Segments is the directory the ranks write their segment files to
	// ("" = a temporary directory on this host, removed afterwards). A job
	// spanning hosts needs one that every host writes (a shared file
	// system); the directory is kept, so `p2ptrace merge` can be run again.
	Segments string
	// HangTimeout: every rank blocked in MPI (or finished) and no call made
	// for this long ends the job as hung (0 = DefaultHangTimeout).
	HangTimeout time.Duration
	// Timeout, if positive, bounds the job in wall-clock time (a rank
	// spinning in its own code never looks hung): past it the job is ended
	// and the trace marked with a no-progress finding naming the ranks that
	// ran code of their own and their last recorded call.
	Timeout time.Duration
	Stdout  io.Writer // the job's output
	Stderr  io.Writer
	// Log, if set, is told what the recorder does (the launcher command line,
	// a hang being detected).
	Log io.Writer
	// ForceMatch, "RANK:N=SRC", makes rank RANK's N-th receive or probe
	// from MPI_ANY_SOURCE one from SRC (check's re-runs; see the shim and
	// anySourceOrdinal).
	ForceMatch string
}

// RecordMPI runs an MPI program under the launcher with the p2ptrace shim
// preloaded into every rank (built with mpicc on first use), watches the
// ranks while they run, and merges the ranks' segments into one trace.
//
// When every rank sits in a blocking MPI call (or has finished) and none has
// made a call for HangTimeout, the job is ended, the trace is marked hung and
// its header message holds the hang analysis (the replay's wait-for cycle or
// the rank waited on, with the nearest unmatched candidate). A rank that
// aborts or hits an MPI error marks the trace crashed, with MPI's error text.
func RecordMPI(ctx context.Context, o MPIOptions) (*Summary, error) {
	if err := checkMPIOptions(&o); err != nil {
		return nil, err
	}
	exe, err := mpiProgram(o.Program, o.Ranks)
	if err != nil {
		return nil, err
	}
	launcher, err := exec.LookPath(o.MPIRun)
	if err != nil {
		return nil, fmt.Errorf("%w: no MPI launcher %q: %v (install Open MPI, e.g. apt-get install openmpi-bin libopenmpi-dev, or pass --mpirun PATH)", ErrUsage, o.MPIRun, err)
	}
	shim, err := mpi.BuildShim(ctx, mpi.BuildOptions{MPICC: o.MPICC, Stderr: o.Stderr})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	segdir, out, cleanup, err := jobPaths(o.Segments, o.Output)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	// The launcher's output is copied by goroutines of exec while the
	// monitor logs: writers shared between them are locked.
	o.Stdout, o.Stderr, o.Log = lockWriters(o.Stdout, o.Stderr, o.Log)
	args := launcherArgs(o, shim, segdir, exe)
	if o.Log != nil {
		fmt.Fprintf(o.Log, "p2ptrace: %s %s\n", launcher, strings.Join(args, " "))
	}
	cmd := exec.Command(launcher, args...)
	tail := &tailWriter{w: o.Stderr, keep: 4096} // (for noModuleHint)
	cmd.Stdout, cmd.Stderr = o.Stdout, tail
	cmd.Env = launcherEnv()
	// The job gets a session of its own: Open MPI puts each rank in a
	// process group of its own, but they stay in the launcher's session, so
	// ending the session reaches every local rank. Signals to p2ptrace's
	// group (a terminal's ^C) are forwarded once, by us.
	cmd.SysProcAttr = childAttr(true)
	cmd.WaitDelay = outputGrace
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting %s: %v", ErrUsage, launcher, err)
	}
	job := &mpiJob{cmd: cmd, dir: segdir, ranks: o.Ranks, timeout: o.HangTimeout, deadline: o.Timeout, log: o.Log, api: "MPI"}
	why, runErr := job.wait(ctx)
	job.reap()

	if segs, _ := filepath.Glob(filepath.Join(segdir, "*")); len(segs) == 0 {
		if runErr != nil {
			command := strings.Join(append([]string{o.Program}, o.Args...), " ")
			if h := noModuleHint(string(tail.tail), "mpi4py", exe); h != "" {
				return nil, fmt.Errorf("%w: %s: %v, and no rank recorded anything: %s", ErrProgramFailed, command, runErr, h)
			}
			return nil, fmt.Errorf("%w: %s: %v, and no rank recorded anything (is it an MPI program, dynamically linked against the MPI library?)", ErrProgramFailed, command, runErr)
		}
		return nil, fmt.Errorf("%w: %s ran, but no rank recorded anything: it must be an MPI program dynamically linked against the MPI library", ErrNoCalls, o.Program)
	}
	hungAfter := time.Duration(0)
	if why.hung {
		hungAfter = o.HangTimeout
	}
	command := append([]string{o.Program}, o.Args...)
	mo := mpi.MergeOptions{Command: command, Hash: o.Hash, Force: o.Force, EndedAt: why.endedUnix()}
	if why.timedOut {
		mo.Status = trace.StatusHung // ended by us, not crashed
	}
	if _, err := MergeMPI(segdir, out, mo, hungAfter); err != nil {
		return nil, err
	}
	if why.timedOut {
		if err := markTimedOut(out, o.Timeout, why.running); err != nil {
			return nil, err
		}
	}
	if err := setMPIRerun(out, o, exe); err != nil {
		return nil, err
	}
	sum, err := Summarize(out)
	if err != nil {
		return nil, err
	}
	sum.Path = o.Output
	sum.Interrupted = why.interrupted
	runErr = launcherError(why, sum.Header.Status, runErr)
	if runErr != nil && !why.hung && !why.timedOut {
		sum.ProgramError = runErr.Error()
		return sum, fmt.Errorf("%w: %s: %v", ErrProgramFailed, o.Program, runErr)
	}
	return sum, nil
}

func checkMPIOptions(o *MPIOptions) error {
	if o.Ranks < 1 {
		return fmt.Errorf("%w: -n %d: want at least one rank", ErrUsage, o.Ranks)
	}
	if o.Output == "" {
		o.Output = "trace.db"
	}
	if o.MPIRun == "" {
		o.MPIRun = "mpirun"
	}
	if o.HangTimeout == 0 {
		o.HangTimeout = DefaultHangTimeout
	}
	if o.HangTimeout < 0 {
		return fmt.Errorf("%w: --hang-timeout %v: want a positive duration", ErrUsage, o.HangTimeout)
	}
	switch o.Hash {
	case "", gpu.HashFull, gpu.HashSample, gpu.HashOff:
	default:
		return fmt.Errorf("%w: --hash %q: want full, sample or off", ErrUsage, o.Hash)
	}
	if _, err := os.Stat(o.Output); err == nil && !o.Force {
		return fmt.Errorf("%w: %s already exists (use --force to overwrite it)", ErrUsage, o.Output)
	}
	return nil
}

// segmentDir returns the absolute segment directory: dir, created if needed
// and refused if it holds segments of an earlier run, or a new temporary one.
// jobPaths prepares a job's segment directory (removed by cleanup when it
// is a temporary one) and the trace's absolute path.
func jobPaths(segments, output string) (segdir, out string, cleanup func(), err error) {
	segdir, err = segmentDir(segments)
	if err != nil {
		return "", "", nil, err
	}
	cleanup = func() {}
	if segments == "" {
		cleanup = func() { os.RemoveAll(segdir) }
	}
	out, err = filepath.Abs(output)
	if err != nil {
		cleanup()
		return "", "", nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return segdir, out, cleanup, nil
}

func segmentDir(dir string) (string, error) {
	if dir == "" {
		return tempDir("segments")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: --segments: %v", ErrUsage, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("%w: --segments: %v", ErrUsage, err)
	}
	if old, _ := filepath.Glob(mpi.SegmentPath(abs, 0)); len(old) > 0 {
		return "", fmt.Errorf("%w: --segments %s holds the segments of an earlier run: give an empty directory", ErrUsage, dir)
	}
	return abs, nil
}

// mpiProgram checks that prog is an executable file and returns its
// absolute path; ranks is -n, for the hint of a Python script.
func mpiProgram(prog string, ranks int) (string, error) {
	if prog == "" {
		return "", fmt.Errorf("%w: no program given", ErrUsage)
	}
	if !strings.ContainsRune(prog, filepath.Separator) {
		// A bare name not in the working directory is looked up on PATH, as
		// a shell (and mpirun) would: `-- python3 prog.py`.
		if _, err := os.Stat(prog); err != nil {
			if path, err := exec.LookPath(prog); err == nil {
				prog = path
			}
		}
	}
	fi, err := os.Stat(prog)
	if err != nil {
		return "", fmt.Errorf("%w: no such program: %s", ErrUsage, prog)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%w: %s is a directory: with -n, PROGRAM is an MPI executable (build it with mpicc); Go programs on package gpu are recorded without -n", ErrUsage, prog)
	}
	if fi.Mode()&0o111 == 0 {
		return "", notExecutable(prog, ranks)
	}
	return filepath.Abs(prog)
}

// launcherArgs is the Open MPI command line: the shim preloaded and the
// segment directory exported to every rank (-x reaches remote hosts too).
func launcherArgs(o MPIOptions, shim, segdir, exe string) []string {
	args := []string{"-n", fmt.Sprint(o.Ranks)}
	if o.Ranks > runtime.NumCPU() && !placesRanks(o.MPIArgs) {
		// More ranks than cores on this host: Open MPI refuses to start
		// without it. Users who place ranks themselves decide for themselves.
		args = append(args, "--oversubscribe")
	}
	args = append(args,
		"-x", "LD_PRELOAD="+shim,
		"-x", mpi.EnvSegDir+"="+segdir,
	)
	if o.Hash != "" {
		args = append(args, "-x", gpu.EnvHash+"="+o.Hash)
	}
	if o.ForceMatch != "" {
		args = append(args, "-x", gpu.EnvForceMatch+"="+o.ForceMatch)
	}
	args = append(args, o.MPIArgs...)
	return append(append(args, exe), o.Args...)
}

// placesRanks reports whether the launcher arguments say where ranks run.
func placesRanks(args []string) bool {
	for _, a := range args {
		switch strings.SplitN(a, "=", 2)[0] {
		case "--hostfile", "-hostfile", "--machinefile", "-machinefile", "--host", "-host", "-H",
			"--oversubscribe", "-oversubscribe", "--map-by", "-map-by", "--rankfile", "-rf":
			return true
		}
	}
	return false
}

// launcherEnv is p2ptrace's environment, plus Open MPI's consent to run as
// root when we are root (containers and CI runners): without it mpirun
// refuses, and the user asked p2ptrace to run the job.
func launcherEnv() []string {
	env := os.Environ()
	if os.Geteuid() == 0 {
		env = append(env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	}
	return env
}

// mpiJob is a running launcher and its ranks.
type mpiJob struct {
	cmd     *exec.Cmd
	dir     string
	ranks   int
	timeout time.Duration
	// deadline bounds the whole job (0: none).
	deadline time.Duration
	log      io.Writer
	pids     map[int]bool // rank processes seen, ended for sure by reap
	// rankPID is each rank's process (0: not seen yet), and faults its
	// page faults when faultsAt (see working).
	rankPID  []int
	faults   []uint64
	faultsAt time.Time
	// api is what the ranks call, for the log ("MPI", "torch.distributed").
	api string
}

type endReason struct {
	hung, interrupted bool
	// endedAt: when the monitor began to end a hung or timed-out job.
	endedAt time.Time
	// lingered: a rank had aborted, or every rank had finalized, and the
	// launcher still had not exited after lingerTimeout, so it was ended (Open MPI 4.1.4's mpirun can hang in its own finalize after
	// an MPI error aborted the job); its exit status is then ours, not the
	// program's.
	lingered bool
	// timedOut: the job outlived the deadline; running lists the ranks
	// that were in code of their own then.
	timedOut bool
	running  []int
}

// wait watches the job until the launcher exits, ending it on a hang, a
// forwarded signal or ctx.
func (j *mpiJob) wait(ctx context.Context) (endReason, error) {
	done := waitBounded(j.cmd)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()

	var why endReason
	var deadline <-chan time.Time
	if j.deadline > 0 {
		t := time.NewTimer(j.deadline)
		defer t.Stop()
		deadline = t.C
	}
	j.pids = map[int]bool{}
	j.rankPID, j.faults = make([]int, j.ranks), make([]uint64, j.ranks)
	calls := make([]uint64, j.ranks)
	lastChange := time.Now()
	lastCall := lastChange // the last call a rank made (lastChange: or work seen)
	var allEnded time.Time // when every rank was first seen ended (zero: not yet)
	for {
		select {
		case err := <-done:
			return why, err
		case s := <-sigs:
			why.interrupted = true
			j.signal(s.(syscall.Signal))
		case <-ctx.Done():
			why.interrupted = true
			return why, j.end(done)
		case <-deadline:
			why.timedOut, why.endedAt = true, time.Now()
			for r := range j.ranks {
				if st, err := mpi.ReadLiveState(mpi.SegmentPath(j.dir, r)); err != nil || st.State == mpi.StateRunning && !st.Polling() {
					why.running = append(why.running, r)
				}
			}
			if j.log != nil {
				fmt.Fprintf(j.log, "p2ptrace: the job did not end within --timeout %v; ending it\n", j.deadline)
			}
			return why, j.end(done)
		case now := <-tick.C:
			quiet, changed, ended, aborted := j.poll(calls)
			working := j.working(now, quiet)
			if changed {
				lastCall, lastChange = now, now
			} else if working && now.Sub(lastCall) < j.workingLimit() {
				lastChange = now
			}
			// A launcher left alone: a rank aborted (MPI_Abort or a failed
			// call: the job is being torn down, whatever the other ranks
			// were doing), or every rank finalized and no child of the
			// launcher is alive (a rank that finalized may go on with work
			// of its own, and remote ranks keep ssh children alive: those
			// are waited for). Either way the launcher should exit now.
			if !aborted && (!ended || len(proc.Children(j.cmd.Process.Pid)) > 0) {
				allEnded = time.Time{}
			} else if allEnded.IsZero() {
				allEnded = now
			} else if now.Sub(allEnded) >= j.lingerTimeout() {
				why.lingered = true
				if j.log != nil {
					fmt.Fprintf(j.log, "p2ptrace: the ranks ended %v ago but the launcher did not exit; ending it\n", j.lingerTimeout())
				}
				return why, j.end(done)
			}
			if quiet && now.Sub(lastChange) >= j.timeout {
				why.hung, why.endedAt = true, time.Now()
				if j.log != nil {
					fmt.Fprintf(j.log, "p2ptrace: hang: every rank blocked in %s, polling without success or finished, no other call for %v; ending the job\n", j.api, j.timeout)
				}
				return why, j.end(done)
			}
		}
	}
}

// launcherError is what the exit of a job's launcher (mpirun, torchrun)
// says about the program, given the status of the trace its ranks left:
// when p2ptrace ended a launcher that outlived its ranks (lingered), its
// "signal: terminated" is ours, not the program's, so it is no error if the
// ranks ended cleanly, and says what happened if one crashed.
func launcherError(why endReason, status trace.Status, runErr error) error {
	switch {
	case !why.lingered || runErr == nil:
		return runErr
	case status != trace.StatusCrashed:
		return nil // every rank finalized: only the launcher hung, and we ended it
	}
	return fmt.Errorf("the ranks ended, then the launcher did not exit and p2ptrace ended it (%w)", runErr)
}

// endedUnix is endedAt in Unix ns, 0 when the job was not ended by us.
func (why endReason) endedUnix() int64 {
	if why.endedAt.IsZero() {
		return 0
	}
	return why.endedAt.UnixNano()
}

// lingerTimeout is how long the launcher may outlive the job's ranks (see
// endReason.lingered): the hang timeout, at least 5 s, so that a launcher
// that is only slow to tear down an aborted job on a loaded machine exits
// by itself.
func (j *mpiJob) lingerTimeout() time.Duration { return max(j.timeout, 5*time.Second) }

// poll reads every rank's live state. quiet says every rank has started and
// sits in a blocking MPI call, polls without success (MPI_Test*, MPI_Iprobe
// answering no, and nothing else) or has finalized, at least one of them
// blocked or polling; changed says a rank made a call since the last poll,
// other than a fruitless poll; ended says every rank's segment says it
// ended (MPI_Finalize returned, MPI_Abort, an MPI call failed), aborted
// that one of them aborted or failed.
func (j *mpiJob) poll(calls []uint64) (quiet, changed, ended, aborted bool) {
	quiet, ended = true, true
	blocked := 0
	for r := range j.ranks {
		st, err := mpi.ReadLiveState(mpi.SegmentPath(j.dir, r))
		if err != nil {
			quiet, ended = false, false // not started yet (or not an MPI program): nothing to judge
			continue
		}
		switch st.State {
		case mpi.StateAborted, mpi.StateErrored, mpi.StateSignaled, mpi.StateExited:
			aborted = true
		case mpi.StateFinalized:
		default:
			ended = false
		}
		if st.PID > 0 {
			j.pids[st.PID] = true
			j.rankPID[r] = st.PID
		}
		progress := st.Calls
		if st.Polling() {
			progress = st.PollFrom
		}
		if progress != calls[r] {
			calls[r] = progress
			changed = true
		}
		switch {
		case st.State == mpi.StateBlocked || st.Polling():
			blocked++
		case st.State == mpi.StateFinalized:
		default:
			quiet = false
		}
	}
	return quiet && blocked > 0, changed, ended, aborted
}

// workingFaults is how many page faults a rank takes in a faultWindow, at
// least, while it works inside a call (touching memory it never touched);
// a rank that waits in MPI, spinning or asleep, takes none.
const workingFaults = 16

// faultWindow is how often working compares the ranks' page faults: a
// second, or half the hang timeout if that is shorter.
func (j *mpiJob) faultWindow() time.Duration { return min(time.Second, j.timeout/2) }

// workingLimit is how long work inside calls (working) may keep a job
// whose ranks make no call alive: 12 hang timeouts. Past it the job is
// hung all the same, so that a rank that faults for ever while it waits
// (a thread of its own allocating and freeing large blocks) cannot keep
// p2ptrace waiting for ever.
func (j *mpiJob) workingLimit() time.Duration { return 12 * j.timeout }

// working reports whether a rank of a quiet job (every rank blocked or
// polling: see poll) is at work inside its call all the same: in the last
// faultWindow it took workingFaults page faults or more, touching memory
// it had not (a window of gigabytes being allocated and zeroed, a large
// message copied in). Such a job is slow, not hung: MPICH's
// win_large_shm, whose 1 GiB MPI_Win_allocate takes 20 s here, was ended
// as hung after 5 s. Only ranks on this host are seen.
func (j *mpiJob) working(now time.Time, quiet bool) bool {
	if !quiet {
		j.faultsAt = time.Time{}
		return false
	}
	if !j.faultsAt.IsZero() && now.Sub(j.faultsAt) < j.faultWindow() {
		return false
	}
	work := false
	for r, pid := range j.rankPID {
		var n uint64 // (0: not seen, or not on this host)
		if pid > 0 {
			n, _ = proc.Faults(pid)
		}
		if !j.faultsAt.IsZero() && j.faults[r] > 0 && n >= j.faults[r]+workingFaults {
			work = true
		}
		j.faults[r] = n
	}
	j.faultsAt = now
	return work
}

// signal sends s to the launcher, which passes SIGINT and SIGTERM on to
// every rank, also on other hosts.
func (j *mpiJob) signal(s syscall.Signal) {
	_ = j.cmd.Process.Signal(s)
}

// end stops the job: SIGTERM to the launcher, and after a grace period
// SIGKILL to every process of its session. It returns the launcher's exit
// error.
func (j *mpiJob) end(done <-chan error) error {
	j.signal(syscall.SIGTERM)
	select {
	case err := <-done:
		return err
	case <-time.After(3 * time.Second):
	}
	proc.KillSession(j.cmd.Process.Pid)
	return <-done
}

// reap makes sure no local rank outlives the launcher: what is left of its
// session, and the ranks whose segments name them (in case one left the
// session), are killed, and reap waits until they are gone.
func (j *mpiJob) reap() {
	proc.KillSession(j.cmd.Process.Pid)
	for r := range j.ranks {
		if st, err := mpi.ReadLiveState(mpi.SegmentPath(j.dir, r)); err == nil && st.PID > 0 {
			j.pids[st.PID] = true
		}
	}
	self := os.Getpid()
	left := func() bool {
		n := len(proc.Session(j.cmd.Process.Pid))
		for pid := range j.pids {
			if pid > 1 && pid != self && proc.Running(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				n++
			}
		}
		return n > 0
	}
	// SIGKILL is asynchronous: wait (briefly) until every rank is gone, so
	// that when RecordMPI returns no process of the job is left.
	for deadline := time.Now().Add(2 * time.Second); left() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		proc.KillSession(j.cmd.Process.Pid)
	}
}

// MergeMPI merges the MPI segments in dir into the trace out (mpi.Merge)
// and writes into its header message what the run showed (see annotate).
// hungAfter > 0 says the caller ended the job after that long with every
// rank blocked: the trace is marked hung and gets the wait-for analysis.
// RecordMPI runs it after its job; `p2ptrace merge` on the segments of a job
// launched by hand.
func MergeMPI(dir, out string, o mpi.MergeOptions, hungAfter time.Duration) (*mpi.MergeResult, error) {
	if hungAfter > 0 {
		o.Status = trace.StatusHung
	}
	res, err := mpi.Merge(dir, out, o)
	if err != nil {
		return nil, err
	}
	if err := annotate(out, res, hungAfter); err != nil {
		return nil, err
	}
	return res, nil
}

// annotate writes what the run showed into the trace's header message:
// the findings of a replay of the trace as recorded (missing Waits,
// unmatched sends, truncations...: the same engine and rules as `check`),
// the ready sends that nothing orders after their receive (held replays,
// as check and a Go program's recording judge them:
// replay.Trace.ReadySendFindings), and for a hung job the wait-for
// analysis of where the ranks stopped.
//
// Deadlocks and hangs of that replay are kept only when the job did hang:
// a job that completed did not deadlock, whatever the model's eager limit
// says (`check` reports those under its own faults); message races are
// left to check too.
//
// A crashed job (an abort, an MPI error, a rank killed) is reported by the
// merge alone: its ranks stopped mid-run, so what a replay would call
// unmatched or never waited is an effect of the crash, not a finding;
// but a collective mismatch the replay finds is a cause (see crashCauses).
func annotate(path string, res *mpi.MergeResult, hungAfter time.Duration) error {
	hung := hungAfter > 0
	if res.Header.Status == trace.StatusCrashed {
		return crashCauses(path)
	}
	tr, err := replay.OpenTrace(path)
	if err != nil {
		return err
	}
	tr.SetRules(replay.RulesRecorded) // what the run did, on the backend it ran on
	fs, err := replay.Run(tr.Open, tr.Config(), tr.Site, nil, tr.Header().Seed)
	if err == nil {
		var muts []sim.Problem
		if muts, err = InFlightMutations(tr.Reader()); err == nil {
			for i := range muts {
				fs = append(fs, muts[i].Finding(func(id uintptr) string { return tr.Site(id) }))
			}
		}
	}
	var ready []replay.Finding
	if err == nil {
		ready, err = tr.ReadySendFindings()
	}
	tr.Close()
	if err != nil {
		return err
	}
	note := ""
	if hung {
		note = fmt.Sprintf("hang detected while recording: every rank blocked in %s, polling without success or finished, no other call for %v; the job was ended", apiOf(&res.Header), hungAfter)
		mismatch := func(f replay.Finding) bool { return f.Kind == verdict.CollectiveMismatch }
		if !slices.ContainsFunc(fs, stuck) && !slices.ContainsFunc(fs, mismatch) {
			// The replay did not stop where the job did (its eager limit
			// differs from the MPI's?): say where the ranks were. (Ranks
			// in collectives that do not match hang in the library, not in
			// the model, where each follows its own call's rule: the
			// mismatch is the finding, the note says the job hung.)
			fs = append(fs, blockedRanks(res, hungAfter))
		}
	} else {
		fs = slices.DeleteFunc(fs, stuck)
	}
	// Which sender an AnySource receive gets in the replay follows the
	// model's timing, not the job's: a race is check's to show, under
	// perturbation, not the recording's.
	fs = slices.DeleteFunc(fs, func(f replay.Finding) bool { return f.Kind == verdict.MessageRace })
	for i := range fs {
		fs[i].RevealedBy, fs[i].Seed = "", nil // as recorded
	}
	fs = append(fs, ready...) // (each says the hold that showed it)
	if len(fs) == 0 && note == "" {
		return nil
	}
	return trace.UpdateHeader(path, func(h *trace.Header) {
		if hung {
			h.Status = trace.StatusHung
		}
		if note != "" {
			if h.Message != "" {
				note += "; " + h.Message
			}
			h.Message = note
		}
		// One bug, one finding: what the replay or the payload hashes saw
		// of a bug the merge named (a pending receive that overlaps a
		// send changes the send's buffer) is said in the merge's finding.
		h.Findings = verdict.OnePerBug(append(h.Findings, fs...))
	})
}

// crashCauses adds to a crashed job's trace the collective mismatches a
// replay as recorded finds: MPI implementations often die of one (Open MPI
// does), and the merge alone would name no call. The MPI error the merge
// reported at a mismatched call is folded into the mismatch. So are the
// replay's findings that explain a recorded one (verdict.Explains: an
// invalid call Open MPI did not check, a negative collective count, in
// which the rank died), which check's replays find as well. A replay that
// fails adds nothing: the merge's findings stand.
func crashCauses(path string) error {
	tr, err := replay.OpenTrace(path)
	if err != nil {
		return err
	}
	tr.SetRules(replay.RulesRecorded)
	fs, err := replay.Run(tr.Open, tr.Config(), tr.Site, nil, tr.Header().Seed)
	recorded := tr.Header().Findings
	var ready []replay.Finding
	if err == nil {
		// A ready send that nothing orders after its receive is a bug
		// whether or not the job got to crash (Trace.ReadySendFindings).
		ready, err = tr.ReadySendFindings()
	}
	tr.Close()
	if err != nil {
		return nil
	}
	for i := range fs {
		fs[i].RevealedBy, fs[i].Seed = "", nil // as recorded
	}
	// The causes: a collective mismatch, and what explains a recorded
	// finding (an invalid call the library did not check, in which the
	// rank died: check's replays find it too, so the recording says it).
	fs = slices.DeleteFunc(fs, func(f replay.Finding) bool {
		return f.Kind != verdict.CollectiveMismatch && !slices.ContainsFunc(recorded, func(rec verdict.Finding) bool { return f.Explains(&rec) })
	})
	fs = append(fs, ready...)
	if len(fs) == 0 {
		return nil
	}
	return trace.UpdateHeader(path, func(h *trace.Header) {
		// The MPI error that killed a member of the mismatched call is
		// the mismatch's effect: one finding, the mismatch, says both.
		h.Findings = verdict.OnePerBug(append(h.Findings, fs...))
	})
}

// apiOf names what a recorded job's ranks call, for the hang's words:
// "MPI", or "torch.distributed" (trace.NamesOf).
func apiOf(h *trace.Header) string {
	if a := trace.NamesOf(h).API(); a != "" {
		return a
	}
	return "MPI"
}

// blockedRanks is the hang of a job whose replay did not stop where the
// job did: the ranks blocked in MPI and the calls they were in (calls the
// trace may not hold: a neighbourhood collective, MPI_Comm_create...).
func blockedRanks(res *mpi.MergeResult, hungAfter time.Duration) verdict.Finding {
	f := verdict.New(verdict.Hang, nil, fmt.Sprintf("every rank blocked in %s or finished, no call for %v", apiOf(&res.Header), hungAfter))
	colls := true // every rank blocked in a collective call
	rma := false  // some rank blocked in a one-sided synchronization call
	for _, r := range res.Ranks {
		if r.State == mpi.StateBlocked {
			colls = colls && mpi.CollectiveCall(r.Blocked)
			rma = rma || mpi.RMASyncCall(r.Blocked)
			call := verdict.OpRef{Rank: r.Rank, Op: r.Blocked, Peer: trace.NoRank, Tag: -1, Site: r.Site, Call: r.Blocked, Untraced: true}
			f.Ranks = append(f.Ranks, r.Rank)
			f.Ops = append(f.Ops, call)
			f.Blocked = append(f.Blocked, verdict.Blocked{Rank: r.Rank, Call: call})
		}
	}
	switch {
	case colls && len(f.Blocked) > 0:
		// Ranks stuck in collectives wait for members that are in
		// another one, or none: the collectives' order is the bug.
		f.Hint = verdict.CollectiveMismatch.Hint()
	case rma:
		// A rank waits for another's half of an epoch (MPI_Win_wait for
		// MPI_Win_complete...), which point-to-point's hint does not say.
		f.Hint = mpi.RMASyncHint
	default:
		// The kind's hint speaks of a candidate, which only a replay that
		// hangs names.
		f.Hint = libraryHangHint
	}
	return f
}

// libraryHangHint is the hint of a job that hung where the replay of its
// trace did not: no candidate or cycle to name, so it says where to look.
const libraryHangHint = "replayed from the trace, these calls complete: the MPI library waited where the model does not (a send it did not buffer, a wildcard receive that took another message, a message a poll never saw); `p2ptrace check` replays the trace with zero buffering and in other orders, and names a cycle or a missing message if there is one"

func stuck(f replay.Finding) bool { return f.Kind.Stuck() }

// lockedWriter serializes the writes of several goroutines to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lockWriters wraps each writer in a lock, the same lock for the same
// writer. Files need none (each write is one system call), and stay files,
// so that the launcher writes to them directly.
func lockWriters(ws ...io.Writer) (stdout, stderr, log io.Writer) {
	out := make([]io.Writer, len(ws))
	for i, w := range ws {
		if _, isFile := w.(*os.File); w == nil || isFile {
			out[i] = w
			continue
		}
		out[i] = &lockedWriter{w: w}
		for j := range i {
			if ws[j] == w {
				out[i] = out[j]
				break
			}
		}
	}
	return out[0], out[1], out[2]
}

// markTimedOut marks the trace of a job ended past its --timeout: status
// hung (unless it crashed) and a no-progress finding naming the ranks that
// ran code of their own and each one's last recorded call.
func markTimedOut(path string, d time.Duration, running []int) error {
	last, err := lastCalls(path)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the job did not end within --timeout %v; p2ptrace record ended it", d)
	f := verdict.New(verdict.NoProgress, running, "")
	for _, r := range running {
		fmt.Fprintf(&b, "; rank %d runs code of its own", r)
		if c, ok := last[r]; ok {
			fmt.Fprintf(&b, " (its last MPI call was %s%s)", c.Op, atSite(c.Site))
			f.Ops = append(f.Ops, c)
		}
	}
	f.Message = b.String()
	return trace.UpdateHeader(path, func(h *trace.Header) {
		if h.Status != trace.StatusCrashed {
			h.Status = trace.StatusHung
		}
		h.Findings = append(h.Findings, f)
	})
}

func atSite(s string) string {
	if s == "" {
		return ""
	}
	return " at " + s
}

// lastCalls names each rank's last recorded call.
func lastCalls(path string) (map[int]verdict.OpRef, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := map[int]verdict.OpRef{}
	var ev trace.Event
	for rank := range r.Ranks() {
		c := r.Rank(rank)
		for c.Next(&ev) {
			if ev.Kind != trace.KindPost {
				continue
			}
			o := verdict.OpRef{Rank: rank, Seq: ev.Seq, Op: ev.Op.String(), Peer: int(ev.Peer), Tag: int(ev.Tag), Call: ev.Op.String()}
			if site, ok := r.Site(ev.Site); ok {
				o.Site = fmt.Sprintf("%s:%d", site.File, site.Line)
			}
			out[rank] = o
		}
		if err := c.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
