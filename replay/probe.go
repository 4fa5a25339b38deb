package replay

import (
	"fmt"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// A probe from MPI_ANY_SOURCE (MPI_Probe, an MPI_Iprobe that found a
// message) matches like a receive would (MPI sec. 3.8), and the receive the
// program then makes with the status's source and tag takes the probed
// message. That receive names its source, so the race is the probe's: check
// enumerates the other senders of each such probe as it does a receive's
// (alternatives), and a replay with the probe forced to one of them
// (Config.Force) makes the receive that consumed the probed message follow
// the forced source (probeForce). What the program does with the other
// message, the model cannot know (it may size its buffer from the status,
// or branch on the source): the replay only tells whether the other order
// can happen; the real job, re-run with the probe pinned, judges it.

// IsAnySourceProbe reports whether post, a post event, is a probe (Probe or
// Iprobe) from any source.
func IsAnySourceProbe(post *trace.Event) bool {
	return isProbe(post.Op) && post.Peer == trace.AnySource
}

// ProbeFound reports whether done, a probe's done event, found a message: a
// Probe always does, an Iprobe when it answered yes. Its status (Source,
// StatusTag) then names the message.
func ProbeFound(done *trace.Event) bool {
	return done.Op == trace.OpProbe || (done.Op == trace.OpIprobe && done.Flag)
}

func isProbe(op trace.Op) bool { return op == trace.OpProbe || op == trace.OpIprobe }

// recordedSource is the rank whose message the receive or probe of done
// matched when recorded (trace.NoRank: none).
func recordedSource(done *trace.Event) int32 {
	if isProbe(done.Op) {
		if !ProbeFound(done) {
			return trace.NoRank
		}
		return done.Source
	}
	return done.MatchRank
}

// forcedMatched reports whether the call a forced replay forced (its
// Outcome.Forced) matched the forced sender: a receive took its message, a
// probe found it.
func forcedMatched(forced *sim.Op) bool {
	if forced == nil {
		return false
	}
	if isProbe(forced.Kind) {
		return forced.Done() && forced.Source == forced.ForcedSrc()
	}
	return forced.Matched() != nil
}

// probeForce is a replay's state when Config.Force names a probe.
type probeForce struct {
	probe *sim.Op // the forced probe, once posted
	// follow: the probe's recorded Done was read, and the rank's next
	// receive of the envelope (src, tag, comm) its status answered is the
	// one that consumed the probed message.
	follow         bool
	src, tag, comm int
	consumer       *sim.Op // that receive, once posted
}

// forceProbe forces op, if it is the probe Config.Force names, to the
// forced sender, and reports whether it did. A forced Iprobe is replayed as
// a Probe: the program polled until it found a message, and the forced
// order is the one in which the forced sender's came first.
func (d *driver) forceProbe(op *sim.Op) bool {
	f := d.force
	if f == nil || f.Rank != int(op.Rank) || f.Seq != op.Seq || op.Peer != trace.AnySource {
		return false
	}
	op.Force(int32(f.Src))
	d.out.Forced = op
	d.probe.probe = op
	return true
}

// probeDone notes the recorded status of the forced probe, at its Done
// event: the envelope of the receive that consumed the probed message.
// (Not inlined: the driver's hot paths only test whether a probe is forced.)
//
//go:noinline
func (d *driver) probeDone(r int, ev *event) {
	p := d.probe.probe
	if p == nil || int(p.Rank) != r || p.Seq != ev.seq || !ev.probeFound() || d.probe.consumer != nil {
		return
	}
	d.probe.follow = true
	d.probe.src, d.probe.tag, d.probe.comm = int(ev.source()), int(ev.statusTag()), int(p.Comm)
}

// followProbe makes op, a receive being posted, follow the forced probe
// when it is the one that consumed the probed message: the rank's first
// receive after the probe whose source and tag are those the recorded
// probe's status gave, on its communicator. It becomes a receive from any
// source forced to the forced sender, as a forced AnySource receive is, so
// that the replay compares its match with the recorded one (a Race, which
// probeRace hands to the probe, showing the receive from the forced sender
// again). (Not inlined, as probeDone.)
//
//go:noinline
func (d *driver) followProbe(op *sim.Op) {
	p := &d.probe
	if !p.follow || op.Rank != p.probe.Rank || int(op.Peer) != p.src || int(op.Tag) != p.tag || int(op.Comm) != p.comm {
		return
	}
	p.follow = false
	p.consumer = op
	op.Peer = trace.AnySource
	op.Force(p.probe.ForcedSrc())
}

// probeRace, at the end of a replay with a probe forced that found the
// forced sender's message, makes the race of the receive that consumed the
// probed message the probe's: the probe found the message the recording's
// receive took, and the replay's (the forced sender's). When no receive of
// the recorded envelope took the message (the program received it from
// MPI_ANY_SOURCE, or not at all), the race names the ranks alone (unnamed).
func (d *driver) probeRace() {
	p := d.probe.probe
	if p == nil || !forcedMatched(p) {
		return
	}
	if c := d.probe.consumer; c != nil {
		// The program named the status's source, the forced sender in this
		// order: reports show the receive so (a receive from any source
		// while the run went on, so that the engine kept the send it took).
		c.Peer = c.ForcedSrc()
		for i := range d.out.Races {
			if d.out.Races[i].Recv == c {
				d.out.Races[i].Recv = p
				return
			}
		}
	}
	if d.probe.follow || d.probe.consumer != nil {
		d.out.Races = append(d.out.Races, Race{Recv: p, RecordedRank: d.probe.src, ReplayRank: int(p.Source)})
	}
}

// unnamed reports whether r is a probe's race that names no message: the
// ranks whose messages the probe found, not their sends (probeRace).
func (r Race) unnamed() bool { return isProbe(r.Recv.Kind) && r.Replayed == nil }

// probeRaceMessage is the message of a probe's race r; recorded and
// replayed name the sends whose messages it found, when r names them.
func probeRaceMessage(names *trace.Names, r Race, recorded, replayed string) string {
	p := r.Recv
	if r.unnamed() {
		return fmt.Sprintf("rank %d's %s found a message of rank %d when recorded but one of rank %d under replay (no receive of that source and tag took it after the probe): which message it finds depends on arrival order", p.Rank, sim.DescribeIn(names, p), r.RecordedRank, r.ReplayRank)
	}
	return fmt.Sprintf("rank %d's %s found the message of %s when recorded but that of %s under replay (the receive after it takes the message it found): which message it finds depends on arrival order", p.Rank, sim.DescribeIn(names, p), recorded, replayed)
}

// probeUnjudged says why a probe's race is left to a re-run.
const probeUnjudged = "the model cannot judge what the program does with the message a probe finds"

// probed reports whether race f is a probe's.
func probed(f Finding) bool {
	return len(f.Ops) > 0 && (f.Ops[0].Op == trace.OpProbe.String() || f.Ops[0].Op == trace.OpIprobe.String())
}
