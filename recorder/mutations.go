package recorder

import (
	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// InFlightMutations reads a trace and returns the in-flight mutations it
// shows: nonblocking sends, and nonblocking collectives (their send side),
// whose payload hash at completion differs from the one at post. A live
// gpu recording reports them as they happen; for a trace recorded
// elsewhere (an MPI job, a Python program) this is where they are found.
// The problems' ops carry the trace's site ids, and are named in the
// trace's vocabulary (trace.NamesOf).
func InFlightMutations(r *trace.Reader) ([]sim.Problem, error) {
	var out []sim.Problem
	var ev trace.Event
	h := r.Header()
	names := trace.NamesOf(&h)
	for rank := range r.Ranks() {
		// Post events of sends waiting for their done event: a nonblocking
		// send's done comes after other calls, so keep what it needs.
		type post struct {
			op   sim.Op
			hash uint64
		}
		pending := map[uint64]post{}
		c := r.Rank(rank)
		for c.Next(&ev) {
			if !ev.Op.IsSend() && !ev.Op.IsNonblockingCollective() {
				continue
			}
			if ev.Kind == trace.KindPost {
				if ev.HashPost != 0 {
					pending[ev.Seq] = post{sim.Op{Rank: int32(rank), Seq: ev.Seq, Kind: ev.Op, Peer: ev.Peer, Tag: ev.Tag,
						Comm: ev.Comm, Dtype: ev.Dtype, Count: ev.Count, Bytes: ev.Bytes, Site: uintptr(ev.Site)}, ev.HashPost}
				}
				continue
			}
			p, ok := pending[ev.Seq]
			if !ok {
				continue
			}
			delete(pending, ev.Seq)
			if trace.Mutated(p.hash, ev.HashDone) {
				out = append(out, sim.InFlightMutation(names, &p.op))
			}
		}
		if err := c.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
