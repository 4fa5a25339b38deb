// Command p2ptrace records, shows, verifies, exports and replays traces of
// the point-to-point communication of multi-rank programs.
//
// Exit status: 0 clean, 1 findings, 2 usage or input errors.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// run executes the command line args and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(&factory{In: stdin, Out: stdout, Err: stderr, progressDelay: time.Second}, args)
}

// runWith executes the command line args with f's streams and settings.
func runWith(f *factory, args []string) int {
	stdin, stdout, stderr := f.In, f.Out, f.Err
	root := newRootCmd(f)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if perr := f.stopProfile(); err == nil && perr != nil {
		err = perr
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "p2ptrace: %v\n", err)
	return exitCode(err)
}

// Exit statuses.
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
)

// exitError carries the exit status of an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is a usage error (exit 2).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// inputError marks err as an input error (exit 2): a missing, damaged or
// foreign file.
func inputError(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitUsage, err: err}
}

// findingsError marks err as findings (exit 1): the command ran, and found
// problems in the program.
func findingsError(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitFindings, err: err}
}

// exitCode maps an error to an exit status: the exitError's code, else 2.
func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitUsage
}
