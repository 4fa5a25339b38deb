package replay

import (
	"fmt"
	"slices"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// collective makes a collective call (Barrier, Bcast, ... Exscan) of rank
// r: the engine matches the k-th collective of each member of its
// communicator and checks that they agree (sim.Engine.Collective).
func (d *driver) collective(r int, c *rankCursor, ev *event) bool {
	call := d.msgOp(r, ev)
	// Released once the call returned (the engine keeps no completed
	// call); not through hold, which keeps AnySource receives, and a
	// collective without a root has Peer -1.
	c.held = append(c.held, call)
	return d.e.Collective(call)
}

// icollective initiates a nonblocking collective (Ibarrier ... Iexscan)
// of rank r: a request, as an Isend's, that the engine completes by its
// blocking form's dependencies (sim.Engine.Icollective) and the recorded
// Wait or Test names by its recorded id.
func (d *driver) icollective(r int, c *rankCursor, ev *event) bool {
	op := d.msgOp(r, ev)
	d.e.NewRequest(op)
	c.reqs.put(ev.req, op)
	return d.e.Icollective(op)
}

// syncCollHint is the hint of a deadlock under sync in which a collective
// waits only because sync makes it synchronize.
const syncCollHint = "the recorded run completed only because sends were buffered (eager) and collectives did not synchronize; " +
	"MPI lets every collective synchronize (MPI-3.1 sec. 5.13, Correctness), and with zero buffering it deadlocks: " +
	"call the collectives so that no rank waits, before its collective, for a message another rank sends only after it"

// collSyncOnly reports whether a stuck run has a rank blocked in a
// collective only because the sync fault makes it synchronize.
func collSyncOnly(p *sim.Problem) bool {
	return slices.ContainsFunc(p.Blocked, func(bl sim.Blocked) bool { return bl.SyncOnly })
}

// collUnsafe is the unsafe-buffering finding of a collective blocked only
// under sync: the run completed as recorded because it did not
// synchronize, which no implementation promises.
func collUnsafe(names *trace.Names, bl *sim.Blocked, site sim.SiteFunc) Finding {
	op := bl.Call
	if !op.Kind.IsCollective() {
		// A Wait or Test on a nonblocking collective: name the collective.
		if i := slices.IndexFunc(bl.Pending, func(o *sim.Op) bool { return o.Kind.IsCollective() }); i >= 0 {
			op = bl.Pending[i]
		}
	}
	f := verdict.New(verdict.UnsafeBuffering, append([]int{int(op.Rank)}, bl.WaitsOn...),
		fmt.Sprintf("rank %d: %s completes only if the collective does not synchronize (it waits for %s)", op.Rank, sim.DescribeIn(names, op), verdict.RankList(bl.WaitsOn)),
		sim.RefIn(names, op, site))
	f.Hint = "collectives may synchronize (MPI-3.1 sec. 5.13, Correctness): a correct program calls them so that it cannot deadlock whether they synchronize or not; " +
		"make every rank reach the collective before it waits for a message sent after the collective"
	return f
}
