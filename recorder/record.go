package recorder

import (
	"context"
	"errors"
	"fmt"
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
	Stdout   io.Writer // the program's output
	Stderr   io.Writer
}

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
	cmd.Env = append(os.Environ(), gpu.EnvTrace+"="+out)
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
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting %s: %v", ErrUsage, o.Program, err)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var runErr error
	interrupted := false
wait:
	for {
		select {
		case runErr = <-done:
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
		if runErr != nil {
			return nil, fmt.Errorf("%w: %s: %v, and it wrote no trace (did it call gpu.Launch?)", ErrProgramFailed, o.Program, runErr)
		}
		return nil, fmt.Errorf("%w: %s ran, but wrote no trace: it must call gpu.Launch", ErrNoCalls, o.Program)
	}
	sum, err := Summarize(out)
	if err != nil {
		return nil, err
	}
	sum.Path = o.Output
	sum.Interrupted = interrupted
	if runErr != nil {
		sum.ProgramError = runErr.Error()
		return sum, fmt.Errorf("%w: %s: %v", ErrProgramFailed, o.Program, runErr)
	}
	return sum, nil
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
			return "", nop, fmt.Errorf("%w: %s is not executable", ErrUsage, prog)
		}
		abs, err := filepath.Abs(prog)
		return abs, nop, err
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
		return "", nop, fmt.Errorf("%w: building %s: %v\n%s", ErrUsage, prog, err, strings.TrimSpace(buildErr.String()))
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
	if s.Header.Message != "" {
		fmt.Fprintf(&b, "findings while recording:\n%s\n", indent(s.Header.Message))
	}
	return b.String()
}

// Clean reports whether the recording found nothing wrong.
func (s *Summary) Clean() bool {
	return s.Header.Status == trace.StatusComplete && s.Header.Message == "" && s.ProgramError == "" && !s.Incomplete
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
