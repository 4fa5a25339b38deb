// Package testjobs runs subtests that mostly wait on processes of their own
// (MPI jobs, torch ranks: launcher startup, hang timeouts, teardown) several
// at a time.
//
// t.Parallel caps the subtests that run at once at -parallel, GOMAXPROCS
// by default: 2 on CI's 2-core machine. Such subtests leave the cores idle
// most of the time (TestMPIScenarioVerdicts used 43 s of CPU in 94 s of
// wall clock, two jobs at a time), so they are run here from goroutines,
// which t.Run allows, with a bound of their own.
package testjobs

import (
	"sync"
	"testing"
)

// Job is one subtest: its name and its function. The function must not
// call t.Parallel (its parent waits for it: that would never return).
type Job struct {
	Name string
	F    func(t *testing.T)
}

// Run runs every job as a subtest of t, at most n at once, in the order
// given (put the longest first), and returns when all have ended.
func Run(t *testing.T, n int, jobs []Job) {
	t.Helper()
	slots := make(chan struct{}, max(n, 1))
	var wg sync.WaitGroup
	for _, j := range jobs {
		slots <- struct{}{} // started in order, n at a time
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			t.Run(j.Name, j.F)
		}()
	}
	wg.Wait()
}
