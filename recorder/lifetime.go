package recorder

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/proc"
)

// outputGrace bounds how long the recorder waits, once its child has
// exited, for the child's output to end. Output that goes to a writer other
// than a file is copied from a pipe, and exec's Wait returns when every
// holder of the pipe has closed it: a process that left the job's session
// (a daemon a rank started) could hold it for ever, past every kill of the
// session, and the recorder would never return.
const outputGrace = 2 * time.Second

// waitBounded starts cmd's Wait in a goroutine, its wait for output bounded
// by outputGrace (set before cmd.Start: see exec.Cmd.WaitDelay), and
// returns the channel its result comes on. Output cut short that way is no
// error of the program's: exec.ErrWaitDelay becomes nil.
func waitBounded(cmd *exec.Cmd) <-chan error {
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if errors.Is(err, exec.ErrWaitDelay) {
			err = nil
		}
		done <- err
	}()
	return done
}

// childAttr ties a child's life to the recorder's: the kernel sends it
// SIGTERM when the recorder dies, by any signal, kill -9 included
// (PR_SET_PDEATHSIG). SIGTERM, not SIGKILL: a recorded program flushes its
// trace and marks it interrupted, and mpirun ends its ranks. The child gets
// a process group (or, with session, a session) of its own, so that a
// terminal's ^C reaches it once, forwarded by the recorder.
func childAttr(session bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: !session, Setsid: session}
}

// tempDir makes a temporary directory p2ptrace-KIND-PID-* for this
// recorder, first removing those of recorders that died without cleaning
// up (kill -9). Removing stale ones at the next start rather than building
// into a cache keyed by content: the key would be the whole module and its
// dependencies (go build caches the compiling already; only the link is
// redone), and a directory named by a dead pid is certainly stale.
func tempDir(kind string) (string, error) {
	prefix := "p2ptrace-" + kind + "-"
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, dir := range old {
		rest := strings.TrimPrefix(filepath.Base(dir), prefix)
		pid, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '-'), 0)])
		if err == nil && pid > 0 && pid != os.Getpid() && !proc.Running(pid) {
			os.RemoveAll(dir)
		}
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", prefix, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("temporary directory: %w", err)
	}
	return dir, nil
}
