package replay

import (
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"strings"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// The findings' types are package verdict's: one vocabulary for every door.
// These names keep replay's API readable for its users.
type (
	Finding     = verdict.Finding
	OpRef       = verdict.OpRef
	Report      = verdict.Report
	Enumeration = verdict.Enumeration
)

// Causes of a finding.
const (
	CauseProgram = verdict.CauseProgram
	CauseFault   = verdict.CauseFault
)

// Dedup keeps the first finding of each signature, in order.
func Dedup(fs []Finding) []Finding { return verdict.Dedup(fs) }

// refEvent names an op by its recorded post event.
func refEvent(names *trace.Names, ev *trace.Event, site sim.SiteFunc) OpRef {
	op := sim.Op{Rank: ev.Rank, Seq: ev.Seq, Kind: ev.Op, Peer: ev.Peer, Tag: ev.Tag, Comm: ev.Comm, Bytes: ev.Bytes, Site: uintptr(ev.Site)}
	return sim.RefIn(names, &op, site)
}

func atSite(s string) string {
	if s == "" {
		return ""
	}
	return " at " + s
}

// Explain turns a replay's outcome into findings. faultDesc describes the
// faults of the run ("" for none); sync says zero buffering was on; drops
// describes the messages a fault dropped ("" for none).
func Explain(out *Outcome, site sim.SiteFunc, faultDesc string, sync bool, drops string) []Finding {
	dropped := drops != ""
	names := out.names // the trace's vocabulary (Config.Names)
	var fs []Finding
	for i := range out.Problems {
		p := &out.Problems[i]
		f := p.Finding(site)
		if p.Kind.Stuck() {
			switch {
			case dropped:
				// A lost message, not the program's waits, is the root: a hang.
				f.Kind, f.Cycle = verdict.Hang, nil
				f.Cause, f.Fault = CauseFault, drops
				f.Hint = "the injected drop explains this hang: the receive never got its message; a real lossy transport would need a timeout or retry"
			case sync && collSyncOnly(p):
				f.Hint = syncCollHint
			case sync:
				f.Hint = "the recorded run completed only because sends were buffered (eager); with zero buffering it deadlocks: " + verdict.Deadlock.Hint()
			}
		}
		fs = append(fs, f)
		if sync && !dropped && p.Kind == verdict.Deadlock {
			for _, bl := range p.Blocked {
				if bl.SyncOnly {
					fs = append(fs, collUnsafe(names, &bl, site))
					continue
				}
				for _, op := range append([]*sim.Op{bl.Call}, bl.Pending...) {
					if op.Kind.IsSend() && op.Kind != trace.OpStreamSend && op.Mode == sim.Standard { // a stream send is never buffered
						fs = append(fs, verdict.New(verdict.UnsafeBuffering, []int{int(op.Rank), int(op.Peer)},
							fmt.Sprintf("rank %d: %s completes only if the runtime buffers it", op.Rank, sim.DescribeIn(names, op)), sim.RefIn(names, op, site)))
						break
					}
				}
			}
		}
	}
	for _, c := range out.Corrupted {
		f := verdict.New(verdict.CorruptedData, []int{int(c.Recv.Rank), int(c.Send.Rank)}, "", sim.RefIn(names, c.Recv, site), sim.RefIn(names, c.Send, site))
		var b strings.Builder
		fmt.Fprintf(&b, "rank %d received data that rank %d's %s rewrote while it was in flight (hash at post differs from hash at completion)", c.Recv.Rank, c.Send.Rank, sim.DescribeIn(names, c.Send))
		// The write is no runtime call: name the interval it happened in.
		sendAt := sim.RefIn(names, c.Send, site).Site
		if w := c.Retired; w != nil {
			o := refEvent(names, w, site)
			f.Ops = append(f.Ops, o)
			fmt.Fprintf(&b, "\nthe buffer was written after the %s%s and before its %s%s returned", names.Op(c.Send.Kind), atSite(sendAt), o.Op, atSite(o.Site))
		} else {
			fmt.Fprintf(&b, "\nthe buffer was written after the %s%s, whose request was never waited", names.Op(c.Send.Kind), atSite(sendAt))
		}
		if d := c.Diff; d != nil {
			first, start := d.First, d.Start
			f.FirstDiff, f.Dtype, f.WindowStart, f.Got, f.Want = &first, d.Dtype.String(), &start, d.Got, d.Want
			fmt.Fprintf(&b, "\nfirst differing element: [%d] (%s): got %s, sent %s", d.First, d.Dtype, d.Got[d.First-d.Start], d.Want[d.First-d.Start])
			fmt.Fprintf(&b, "\nelements %d..%d: got  [%s]\n%*s sent [%s]", d.Start, d.Start+int64(len(d.Got))-1, strings.Join(d.Got, " "), len(fmt.Sprintf("elements %d..%d:", d.Start, d.Start+int64(len(d.Got))-1)), "", strings.Join(d.Want, " "))
		} else {
			fmt.Fprintf(&b, "\nthe trace holds no values of this send: record with --payloads to see the first differing element (payloads up to %d KiB are stored)", trace.DefaultPayloadCap>>10)
		}
		f.Message = b.String()
		fs = append(fs, f)
	}
	for _, r := range out.Races {
		f := verdict.New(verdict.MessageRace, []int{int(r.Recv.Rank), r.RecordedRank, r.ReplayRank}, "", sim.RefIn(names, r.Recv, site))
		recorded := fmt.Sprintf("rank %d's op %d", r.RecordedRank, r.RecordedSeq)
		if e := r.Recorded; e != nil {
			o := refEvent(names, e, site)
			f.Ops = append(f.Ops, o)
			recorded = fmt.Sprintf("rank %d's %s (op %d)%s", o.Rank, o.Op, o.Seq, atSite(o.Site))
		}
		replayed := fmt.Sprintf("rank %d's op %d", r.ReplayRank, r.ReplaySeq)
		if s := r.Replayed; s != nil {
			o := sim.RefIn(names, s, site)
			f.Ops = append(f.Ops, o)
			replayed = fmt.Sprintf("rank %d's %s (op %d)%s", o.Rank, o.Op, o.Seq, atSite(o.Site))
		}
		f.Message = fmt.Sprintf("rank %d's %s matched %s when recorded but %s under replay: which send it gets depends on arrival order", r.Recv.Rank, sim.DescribeIn(names, r.Recv), recorded, replayed)
		if isProbe(r.Recv.Kind) {
			f.Message = probeRaceMessage(names, r, recorded, replayed)
		}
		fs = append(fs, f)
	}
	for i := range fs {
		fs[i].RevealedBy = faultDesc
	}
	return fs
}
