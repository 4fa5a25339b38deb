package recorder

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/mpi"
	"github.com/p2ptrace/p2ptrace/recorder/python"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// torchLauncher starts the ranks as torchrun does and, as torchrun does,
// ends the others when one fails. $1 is the rank count, the rest the
// command; bash's wait -n (5.1 or later, for -p) reports ranks in the order
// they end.
const torchLauncher = `n=$1; shift
pids=()
for ((i = 0; i < n; i++)); do
  RANK=$i LOCAL_RANK=$i GROUP_RANK=0 ROLE_RANK=$i "$@" &
  pids+=($!)
done
rc=0
while :; do
  unset id
  wait -n -p id
  s=$?
  [ -z "${id-}" ] && break # no rank left
  if [ "$s" -ne 0 ] && [ "$rc" -eq 0 ]; then
    rc=$s
    kill -TERM "${pids[@]}" 2>/dev/null
  fi
done
exit $rc
`

// RecordTorch runs a torch.distributed program as o.Ranks processes, as
// torchrun does (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
// MASTER_ADDR=127.0.0.1 and a free MASTER_PORT), with the Python recorder
// (package recorder/python) on their PYTHONPATH, watches them with the MPI
// hang monitor and merges their segments into one trace. o.Program is the
// Python interpreter (with torch), o.Args its arguments (the script first);
// MPIRun, MPIArgs and MPICC are not used.
func RecordTorch(ctx context.Context, o MPIOptions) (*Summary, error) {
	if err := checkMPIOptions(&o); err != nil {
		return nil, err
	}
	if o.Program == "" {
		return nil, fmt.Errorf("%w: no program given", ErrUsage)
	}
	interp, err := exec.LookPath(o.Program)
	if err != nil {
		if pythonHint(o.Program, o.Ranks) != "" {
			// The script, given without its interpreter.
			return nil, fmt.Errorf("%w: %s is a Python script, and with --launcher torch PROGRAM is the Python interpreter: record it with `p2ptrace record -n %d --launcher torch -- /usr/bin/python3 %s`", ErrUsage, o.Program, o.Ranks, o.Program)
		}
		return nil, fmt.Errorf("%w: no such program: %s (with --launcher torch, PROGRAM is the Python interpreter, e.g. /usr/bin/python3 train.py)", ErrUsage, o.Program)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, fmt.Errorf("%w: bash not found: it starts the ranks", ErrUsage)
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("%w: no free port for MASTER_PORT: %v", ErrUsage, err)
	}
	n := strconv.Itoa(o.Ranks)
	return recordPython(ctx, o, pythonLaunch{
		path: bash,
		args: append([]string{"-c", torchLauncher, "p2ptrace-torch", n, interp}, o.Args...),
		env: []string{"WORLD_SIZE=" + n, "LOCAL_WORLD_SIZE=" + n, "MASTER_ADDR=127.0.0.1",
			"MASTER_PORT=" + strconv.Itoa(port), "TORCHELASTIC_RUN_ID=p2ptrace"},
		what: fmt.Sprintf("%d ranks of %s %s (MASTER_PORT=%d)", o.Ranks, interp, strings.Join(o.Args, " "), port),
		hint: func(tail string) string { return noModuleHint(tail, "torch", interp) },
	})
}

// noModuleHint explains ranks whose interpreter could not import module
// (torch: the recorder's sitecustomize says so; mpi4py: the program's
// traceback does), from the tail of their stderr: often the python3 first
// on PATH is not the one that has it.
func noModuleHint(stderrTail, module, interp string) string {
	if !strings.Contains(stderrTail, "No module named '"+module+"'") {
		return ""
	}
	return fmt.Sprintf("%s cannot import %s: give an interpreter that can (Debian's python3-%s installs it for /usr/bin/python3)", interp, module, module)
}

// pythonLaunch is how a job of Python ranks is started: by p2ptrace's own
// launcher (RecordTorch) or by the user's torchrun (RecordTorchrun).
type pythonLaunch struct {
	path string   // the launcher executable
	args []string // its arguments
	env  []string // added to the recorder's environment
	what string   // the job, for the log
	// hint, if set, explains a launcher that failed before any rank
	// recorded, from the tail of its stderr ("" = nothing to add).
	hint func(stderrTail string) string
}

// recordPython runs the job l starts with the Python recorder on every
// rank's PYTHONPATH, watches its o.Ranks ranks with the MPI hang monitor
// (a hang, or o.Timeout passing, ends the launcher's whole session) and
// merges their segments.
func recordPython(ctx context.Context, o MPIOptions, l pythonLaunch) (*Summary, error) {
	pyDir, err := python.Install("")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	segdir, out, cleanup, err := jobPaths(o.Segments, o.Output)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	o.Stdout, o.Stderr, o.Log = lockWriters(o.Stdout, o.Stderr, o.Log)
	if o.Log != nil {
		fmt.Fprintf(o.Log, "p2ptrace: %s\n", l.what)
	}
	cmd := exec.Command(l.path, l.args...)
	cmd.Stdout, cmd.Stderr = o.Stdout, o.Stderr
	var tail *tailWriter
	if l.hint != nil {
		tail = &tailWriter{w: o.Stderr, keep: 4096}
		cmd.Stderr = tail
	}
	cmd.Env = append(recorderEnv(o, pyDir, segdir), l.env...)
	cmd.SysProcAttr = childAttr(true) // its own session; ended when the recorder dies
	cmd.WaitDelay = outputGrace
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting %s: %v", ErrUsage, l.path, err)
	}
	job := &mpiJob{cmd: cmd, dir: segdir, ranks: o.Ranks, timeout: o.HangTimeout, deadline: o.Timeout, log: o.Log, api: trace.TorchNames().API()}
	why, runErr := job.wait(ctx)
	job.reap()

	command := append([]string{o.Program}, o.Args...)
	if segs, _ := filepath.Glob(filepath.Join(segdir, "*")); len(segs) == 0 {
		if runErr != nil {
			if tail != nil {
				if h := l.hint(string(tail.tail)); h != "" {
					return nil, fmt.Errorf("%w: %s: %v, and no rank recorded anything: %s", ErrProgramFailed, strings.Join(command, " "), runErr, h)
				}
			}
			return nil, fmt.Errorf("%w: %s: %v, and no rank recorded anything (does it call torch.distributed.init_process_group?)", ErrProgramFailed, strings.Join(command, " "), runErr)
		}
		return nil, fmt.Errorf("%w: %s ran, but no rank recorded a torch.distributed call", ErrNoCalls, strings.Join(command, " "))
	}
	var hungAfter time.Duration
	if why.hung {
		hungAfter = o.HangTimeout
	}
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
	sum, err := Summarize(out)
	if err != nil {
		return nil, err
	}
	sum.Path = o.Output
	sum.Interrupted = why.interrupted
	runErr = launcherError(why, sum.Header.Status, runErr) // (torchrun may outlive its workers too)
	if runErr != nil && !why.hung && !why.timedOut {
		sum.ProgramError = runErr.Error()
		return sum, fmt.Errorf("%w: %s: %v", ErrProgramFailed, strings.Join(command, " "), runErr)
	}
	return sum, nil
}

// recorderEnv is the environment of a job of Python ranks: p2ptrace's, the
// recorder first on PYTHONPATH, the segment directory and the hash mode.
// The rank variables (RANK, WORLD_SIZE, MASTER_*) are the launcher's.
func recorderEnv(o MPIOptions, pyDir, segdir string) []string {
	env := os.Environ()
	pp := pyDir
	if old := os.Getenv("PYTHONPATH"); old != "" {
		pp += string(os.PathListSeparator) + old
	}
	env = append(env, "PYTHONPATH="+pp, python.EnvPython+"=torch", mpi.EnvSegDir+"="+segdir)
	if o.Hash != "" {
		env = append(env, gpu.EnvHash+"="+o.Hash)
	}
	return env
}

// tailWriter passes writes on to w (nil: discards them) and keeps the last
// keep bytes written. Only exec's copying goroutine writes to it; tail is
// read after the command's Wait, which waits for that goroutine.
type tailWriter struct {
	w    io.Writer
	keep int
	tail []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.tail = append(t.tail, p...)
	if over := len(t.tail) - t.keep; over > 0 {
		t.tail = append(t.tail[:0], t.tail[over:]...)
	}
	if t.w == nil {
		return len(p), nil
	}
	return t.w.Write(p)
}

// freePort asks the kernel for a free TCP port on the loopback interface.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
