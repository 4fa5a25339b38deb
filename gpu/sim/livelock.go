package sim

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// DefaultPollLimit is how many polls in a row a rank may make that find
// nothing (a Test or Testall answering "not yet", an Iprobe answering false)
// before the engine parks it (see Config.PollLimit). Parking changes no
// answer: a parked rank resumes, and polls once more, at the next change of
// the world's state. It only stops a rank from spinning through virtual time
// while nothing can change, so that a livelock (ranks that only poll for what
// no rank can send) ends like any other hang. 1000 polls cost about a
// millisecond of engine time; a program that polls less often than that per
// change of state never notices the limit.
const DefaultPollLimit = 1000

// waitPoll: the rank is parked after PollLimit fruitless polls (see
// DefaultPollLimit). Its blockedIn is the last poll (complete: it is not
// finished again at the resume), waitOn the ops it polls (nil for an Iprobe).

// isPoll reports whether k is a call that only asks (Test, Testall, Iprobe)
// or only spends the rank's own time (Compute): neither changes the world,
// so a rank making only these calls cannot unblock anyone.
func isPoll(k trace.Op) bool {
	return k == trace.OpCompute || k == trace.OpTest || k == trace.OpTestall || k == trace.OpIprobe
}

// changed notes a change of the world's state at time t (a post, an arrival,
// a completion, an answered poll): parked ranks poll again. The callers test
// nParked first, so the common case costs one compare.
func (e *Engine) changed(t int64) {
	for i := range e.ranks {
		rk := &e.ranks[i]
		if rk.state == stateBlocked && rk.wait == waitPoll {
			// One more try: parked again at once if it finds nothing.
			rk.polls = e.pollLimit - 1
			rk.wait, rk.waitOn = waitNone, nil
			rk.blockedIn = nil
			e.wake(rk, t)
		}
	}
	e.nParked = 0
}

// polled counts a poll of rk that found nothing; ops are what it polls (nil
// for an Iprobe). At the limit the rank is parked: the driver must return to
// Next (polled returns false), which hands the rank back once the world
// changes, or reports a hang naming the poll if nothing can change it.
func (e *Engine) polled(rk *rank, call *Op, ops []*Op) bool {
	rk.lastPoll = call
	// The rank's calls since its last fruitless poll were Computes only
	// (the Computes counted apart): the run of polls goes on.
	if m := rk.seq - rk.computes; m == rk.pollMark+1 {
		rk.polls++
	} else {
		rk.polls = 1
	}
	rk.pollMark = rk.seq - rk.computes
	if rk.polls < e.pollLimit {
		return true
	}
	e.park(rk, call, ops)
	return false
}

func (e *Engine) park(rk *rank, call *Op, ops []*Op) {
	rk.state = stateBlocked
	rk.wait, rk.waitOn = waitPoll, ops
	rk.blockedIn = call
	e.nParked++
}

// Parked reports whether rank r was parked by its last poll: its driver
// must return to Next before the rank goes on.
func (e *Engine) Parked(r int) bool {
	rk := &e.ranks[r]
	return rk.state == stateBlocked && rk.wait == waitPoll
}

// Unanswered is a Test or Testall of a replay whose recorded answer was
// "not yet": the program polled on, so the call completes without retiring
// anything. It counts as a fruitless poll unless the replay has completed
// ops already (the recorded world was slower). It returns false when the
// rank is parked (see Parked).
func (e *Engine) Unanswered(call *Op, ops []*Op) bool {
	rk := &e.ranks[call.Rank]
	call.SetReqs(ops)
	e.complete(call, rk.clock)
	for _, op := range ops {
		if op.bits&bitDone == 0 {
			return e.polled(rk, call, ops)
		}
	}
	return true
}

// EndPolling parks rank r for good if its last calls were polls that found
// nothing (Compute between them included): a replay whose record of the rank
// ends there (the recording stopped a livelock, or was cut while the rank
// polled) leaves the rank polling, rather than finishing it with its requests
// still active. It reports whether it did; the driver then keeps the rank
// where it is.
func (e *Engine) EndPolling(r int) bool {
	rk := &e.ranks[r]
	if rk.polls == 0 || rk.lastPoll == nil || rk.seq-rk.computes != rk.pollMark {
		return false // (no poll yet, or other calls since)
	}
	rk.polls = e.pollLimit // every later wake parks it again at once (see changed)
	var ops []*Op
	if rk.lastPoll.Kind != trace.OpIprobe {
		ops = rk.lastPoll.Reqs()
	}
	e.park(rk, rk.lastPoll, ops)
	return true
}

// pollPending is what a parked rank polls for: the ops its Test still waits
// for, or the Iprobe itself (its envelope).
func pollPending(rk *rank) []*Op {
	if rk.blockedIn.Kind == trace.OpIprobe {
		return []*Op{rk.blockedIn}
	}
	var out []*Op
	for _, op := range rk.waitOn {
		if op.bits&bitDone == 0 {
			out = append(out, op)
		}
	}
	return out
}

// pollWhy says, for the message of a hang, what a parked rank polls for.
func (e *Engine) pollWhy(bl *Blocked) string {
	what := "a message"
	if len(bl.Pending) > 0 {
		what = e.describe(bl.Pending[0])
	}
	s := fmt.Sprintf("rank %d polls (%s) %s", bl.Rank, e.cfg.Names.Op(bl.Call.Kind), what)
	switch {
	case len(bl.WaitsOn) == 0:
		s += " that no rank can send"
	default:
		for _, w := range bl.WaitsOn {
			if e.ranks[w].state == stateDone {
				s += fmt.Sprintf("; rank %d has finished", w)
			} else {
				s += fmt.Sprintf("; rank %d cannot send it", w)
			}
		}
	}
	return s
}
