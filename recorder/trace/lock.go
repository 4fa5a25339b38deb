package trace

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// bothErr is an error that reads as msg and wraps msg and also.
type bothErr struct{ msg, also error }

func (e bothErr) Error() string   { return e.msg.Error() }
func (e bothErr) Unwrap() []error { return []error{e.msg, e.also} }

// lockShared takes a shared flock on f, as bbolt's read-only Open does,
// waiting up to timeout. A writer holds the exclusive lock for the whole
// recording, so a trace being written is reported as such rather than read
// while its pages change under the reader (which would look damaged).
func lockShared(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil // no flock on this file system: bbolt's Open decides
		}
		if time.Now().After(deadline) {
			return recordingError(f.Name(), lockHolder(f))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func recordingError(path string, pid int) error {
	by := "by another process"
	if pid > 0 {
		by = "by pid " + strconv.Itoa(pid)
	}
	return fmt.Errorf("trace %s: %w: it is being recorded (%s); read it once the recording ends", path, ErrLocked, by)
}

// lockHolder returns the pid holding the exclusive flock of f, from Linux's
// /proc/locks (0 if unknown).
func lockHolder(f *os.File) int {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer locks.Close()
	ino := ":" + strconv.FormatUint(st.Ino, 10)
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; waiters have "->".
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[3] != "WRITE" || !strings.HasSuffix(fs[5], ino) {
			continue
		}
		if pid, err := strconv.Atoi(fs[4]); err == nil {
			return pid
		}
	}
	return 0
}
