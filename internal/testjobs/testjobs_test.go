package testjobs_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/testjobs"
)

// TestRunBoundsAndRunsAll: every job runs, as a subtest, never more than n
// at once (whatever -parallel says), and n do run at once: each job waits
// until n are running (or a few seconds), then a moment, before it ends.
func TestRunBoundsAndRunsAll(t *testing.T) {
	const n, total = 3, 10
	var running, most, ran atomic.Int32
	full := make(chan struct{})
	var once sync.Once
	var jobs []testjobs.Job
	for range total {
		jobs = append(jobs, testjobs.Job{Name: "job", F: func(t *testing.T) {
			r := running.Add(1)
			for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
			}
			if r >= n {
				once.Do(func() { close(full) })
			}
			select {
			case <-full:
			case <-time.After(5 * time.Second):
			}
			time.Sleep(50 * time.Millisecond) // time for one job too many to start
			running.Add(-1)
			ran.Add(1)
		}})
	}
	testjobs.Run(t, n, jobs)
	if ran.Load() != total || most.Load() != n {
		t.Fatalf("ran %d jobs, at most %d at once; want %d, %d", ran.Load(), most.Load(), total, n)
	}
}
