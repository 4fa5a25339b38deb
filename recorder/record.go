package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	gobuild "go/build"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// Errors of Record that callers branch on.
var (
	// ErrUsage: the request itself is wrong (no such program, output exists...).
	ErrUsage = errors.New("usage")
	// ErrNoCalls: the program ran but made no gpu calls, so nothing was recorded.
	ErrNoCalls = errors.New("the program made no gpu calls")
	// ErrProgramFailed: the program exited non-zero (its trace is still written).
	ErrProgramFailed = errors.New("the program failed")
)

// Options says what to record.
type Options struct {
	Program  string   // a Go main package directory or an executable
	Args     []string // its arguments
	Output   string   // trace path
	Force    bool     // overwrite Output
	Payloads bool
	Hash     string // full, sample, off ("" = full)
	Eager    int64  // eager limit override; 0 = the program's
	Seed     *uint64
	// ForceMatch, "RANK:SEQ=SRC", restricts one AnySource receive to one
	// sender (check's re-runs of a recorded program).
	ForceMatch string
	// Dir is the working directory of the program ("" = p2ptrace's).
	Dir    string
	Stdout io.Writer // the program's output
	Stderr io.Writer
	// Timeout, if positive, bounds the run in wall-clock time: the program's
	// own runtime ends the run with a no-progress finding (gpu.RunTimeout),
	// and if the program has not exited TimeoutGrace later, its process
	// group is killed and the trace marked. PollLimit sets gpu.PollLimit.
	Timeout   time.Duration
	PollLimit int
}

// TimeoutGrace is how long past Options.Timeout Record waits for the
// program to end itself (its runtime reports which rank stopped where)
// before it kills it.
const TimeoutGrace = 3 * time.Second

// Record builds (if needed) and runs the program with recording switched on,
// forwarding SIGINT and SIGTERM to it, and returns the trace's summary.
func Record(ctx context.Context, o Options) (*Summary, error) {
	if o.Output == "" {
		o.Output = "trace.db"
	}
	switch o.Hash {
	case "", gpu.HashFull, gpu.HashSample, gpu.HashOff:
	default:
		return nil, fmt.Errorf("%w: --hash %q: want full, sample or off", ErrUsage, o.Hash)
	}
	if _, err := os.Stat(o.Output); err == nil && !o.Force {
		return nil, fmt.Errorf("%w: %s already exists (use --force to overwrite it)", ErrUsage, o.Output)
	}
	exe, cleanup, err := program(ctx, o.Program, o.Stderr)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if o.Force {
		if err := os.Remove(o.Output); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: removing %s: %v", ErrUsage, o.Output, err)
		}
	}
	out, err := filepath.Abs(o.Output)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	cmd := exec.Command(exe, o.Args...)
	cmd.Stdout, cmd.Stderr = o.Stdout, o.Stderr
	command, err := json.Marshal(append([]string{o.Program}, o.Args...))
	if err != nil {
		return nil, err
	}
	cmd.Env = append(os.Environ(), gpu.EnvTrace+"="+out, gpu.EnvReported+"=1", gpu.EnvCommand+"="+string(command))
	if o.Hash != "" {
		cmd.Env = append(cmd.Env, gpu.EnvHash+"="+o.Hash)
	}
	if o.Payloads {
		cmd.Env = append(cmd.Env, gpu.EnvPayloads+"=1")
	}
	if o.Eager != 0 {
		cmd.Env = append(cmd.Env, gpu.EnvEager+"="+strconv.FormatInt(o.Eager, 10))
	}
	if o.Seed != nil {
		cmd.Env = append(cmd.Env, gpu.EnvSeed+"="+strconv.FormatUint(*o.Seed, 10))
	}
	cmd.SysProcAttr = childAttr(false)
	if o.ForceMatch != "" {
		cmd.Env = append(cmd.Env, gpu.EnvForceMatch+"="+o.ForceMatch)
	}
	cmd.Dir = o.Dir
	binary, err := FileHash(exe)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	var deadline <-chan time.Time
	if o.Timeout > 0 {
		cmd.Env = append(cmd.Env, gpu.EnvTimeout+"="+o.Timeout.String())
		t := time.NewTimer(o.Timeout + TimeoutGrace)
		defer t.Stop()
		deadline = t.C
	}
	if o.PollLimit != 0 {
		cmd.Env = append(cmd.Env, gpu.EnvPollLimit+"="+strconv.Itoa(o.PollLimit))
	}
	cmd.WaitDelay = outputGrace
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting %s: %v", ErrUsage, o.Program, err)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := waitBounded(cmd)
	var runErr error
	interrupted, killed := false, false
wait:
	for {
		select {
		case runErr = <-done:
			break wait
		case <-deadline:
			// Its runtime did not end it: it spins or blocks outside the
			// runtime's reach (before or after gpu.Launch, or in a child).
			killed = true
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			runErr = <-done
			break wait
		case s := <-sigs:
			interrupted = true
			_ = syscall.Kill(-cmd.Process.Pid, s.(syscall.Signal)) // its group
		case <-ctx.Done():
			interrupted = true
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case runErr = <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				runErr = <-done
			}
			break wait
		}
	}
	if _, err := os.Stat(out); errors.Is(err, os.ErrNotExist) {
		if killed {
			return nil, fmt.Errorf("%w: %s did not end within --timeout %v (+%v) and wrote no trace: p2ptrace record killed its process group", ErrProgramFailed, o.Program, o.Timeout, TimeoutGrace)
		}
		if runErr != nil {
			return nil, fmt.Errorf("%w: %s: %v, and it wrote no trace (did it call gpu.Launch?)", ErrProgramFailed, o.Program, runErr)
		}
		return nil, fmt.Errorf("%w: %s ran, but wrote no trace: it must call gpu.Launch", ErrNoCalls, o.Program)
	}
	if err := setRerun(out, o, binary); err != nil {
		return nil, err
	}
	if killed {
		if err := markKilled(out, o.Timeout); err != nil {
			return nil, err
		}
	}
	if err := addReadySends(out); err != nil {
		return nil, err
	}
	sum, err := Summarize(out)
	if err != nil {
		return nil, err
	}
	sum.Path = o.Output
	sum.Interrupted = interrupted
	if runErr != nil && explainedByFindings(runErr, sum) {
		// The program exited non-zero because of the findings it recorded:
		// the summary reports them, once.
		runErr = nil
	}
	if runErr != nil {
		sum.ProgramError = runErr.Error()
		return sum, fmt.Errorf("%w: %s: %v", ErrProgramFailed, o.Program, runErr)
	}
	return sum, nil
}

// addReadySends adds to the trace at path the ready sends that nothing
// orders after their receive (replay's Trace.ReadySendFindings): the live
// run saw its own timing only, in which the receive may have come first.
// A trace that does not replay keeps the findings it has.
func addReadySends(path string) error {
	tr, err := replay.OpenTrace(path)
	if err != nil {
		return nil // (Summarize says what is wrong with it)
	}
	fs, err := tr.ReadySendFindings()
	tr.Close()
	if err != nil || len(fs) == 0 {
		return nil
	}
	return trace.UpdateHeader(path, func(h *trace.Header) { h.Findings = verdict.OnePerBug(append(h.Findings, fs...)) })
}

// explainedByFindings reports whether the program's failure is its own
// report of the findings in its trace: it exited (not killed) non-zero after
// recording findings.
func explainedByFindings(runErr error, sum *Summary) bool {
	var ee *exec.ExitError
	if !errors.As(runErr, &ee) || ee.ExitCode() <= 0 {
		return false
	}
	return sum.Header.Message != "" || sum.Header.Status != trace.StatusComplete
}

// program returns an executable for prog: prog itself, or a binary built
// from a Go main package directory into a temporary directory.
func program(ctx context.Context, prog string, stderr io.Writer) (string, func(), error) {
	nop := func() {}
	if prog == "" {
		return "", nop, fmt.Errorf("%w: no program given", ErrUsage)
	}
	fi, err := os.Stat(prog)
	if err != nil {
		return "", nop, fmt.Errorf("%w: no such program: %s", ErrUsage, prog)
	}
	if !fi.IsDir() {
		if fi.Mode()&0o111 == 0 {
			return "", nop, notExecutable(prog, 0)
		}
		abs, err := filepath.Abs(prog)
		return abs, nop, err
	}
	if pkg, err := gobuild.ImportDir(prog, 0); err == nil && pkg.Name != "main" {
		return "", nop, fmt.Errorf("%w: %s is package %s, not a program: give the directory of a main package (func main calling gpu.Launch) or an executable", ErrUsage, prog, pkg.Name)
	}
	tmp, err := tempDir("build")
	if err != nil {
		return "", nop, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	exe := filepath.Join(tmp, filepath.Base(filepath.Clean(prog)))
	var buildErr strings.Builder
	// Built in its own directory, so that its own module (go.mod above it)
	// is the one used, wherever p2ptrace runs.
	build := exec.CommandContext(ctx, "go", "build", "-o", exe, ".")
	build.Dir = prog
	build.Stderr = &buildErr
	build.SysProcAttr = childAttr(false)
	if err := build.Run(); err != nil {
		cleanup()
		reason := strings.TrimSpace(buildErr.String())
		if strings.Contains(reason, "go.mod file not found") {
			return "", nop, fmt.Errorf("%w: %s is not inside a Go module (no go.mod in it or a parent directory): run 'go mod init' there and 'go get github.com/p2ptrace/p2ptrace', or give an executable", ErrUsage, prog)
		}
		return "", nop, fmt.Errorf("%w: go build in %s failed (%v):\n%s", ErrUsage, prog, err, reason)
	}
	return exe, cleanup, nil
}

// Summary is what `p2ptrace record` and `show` say about a trace.
type Summary struct {
	Path         string
	Header       trace.Header
	Incomplete   bool
	Ops          int64 // post events
	Bytes        int64 // bytes sent
	Interrupted  bool
	ProgramError string
}

// Summarize reads a trace and counts its ops and bytes.
func Summarize(path string) (*Summary, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	s := &Summary{Path: path, Header: r.Header(), Incomplete: r.Incomplete()}
	var ev trace.Event
	for rank := range r.Ranks() {
		c := r.Rank(rank)
		for c.Next(&ev) {
			if ev.Kind != trace.KindPost {
				continue
			}
			s.Ops++
			if ev.Op.IsSend() {
				s.Bytes += ev.Bytes
			}
		}
		if err := c.Err(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Text is the one-paragraph summary.
func (s *Summary) Text() string {
	var b strings.Builder
	status := string(s.Header.Status)
	if s.Incomplete {
		status = "incomplete: the recording was cut short"
	}
	fmt.Fprintf(&b, "recorded %s: %d ranks, %d ops, %d bytes sent, status %s", s.Path, s.Header.WorldSize, s.Ops, s.Bytes, status)
	if s.Interrupted {
		b.WriteString(" (interrupted)")
	}
	b.WriteString("\n")
	h := &s.Header
	switch {
	case len(h.Findings) > 0:
		fmt.Fprintf(&b, "%d finding(s) while recording\n", len(h.Findings))
		for i := range h.Findings {
			b.WriteString("\n")
			b.WriteString(h.Findings[i].Text(i + 1))
		}
		verdict.WriteComms(&b, h.NamedComms(h.Findings))
	case h.FindingsVersion == 0 && h.Message != "":
		// A trace from before structured findings: its findings are prose.
		fmt.Fprintf(&b, "findings while recording (as an older p2ptrace wrote them):\n%s\n", indent(h.Message))
	}
	if h.FindingsVersion > 0 && h.Message != "" {
		fmt.Fprintf(&b, "note: %s\n", h.Message)
	}
	return b.String()
}

// Clean reports whether the recording found nothing wrong.
func (s *Summary) Clean() bool {
	h := &s.Header
	return h.Status == trace.StatusComplete && len(h.Findings) == 0 && (h.FindingsVersion > 0 || h.Message == "") && s.ProgramError == "" && !s.Incomplete
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

// markKilled notes in the trace of a program Record killed past its timeout
// that it did not end (a trace the program left running is marked hung).
func markKilled(path string, d time.Duration) error {
	return trace.UpdateHeader(path, func(h *trace.Header) {
		if h.Status == trace.StatusRunning {
			h.Status = trace.StatusHung
		}
		h.Findings = append(h.Findings, verdict.New(verdict.NoProgress, nil,
			fmt.Sprintf("the program did not end within --timeout %v (+%v): p2ptrace record killed its process group", d, TimeoutGrace)))
	})
}
