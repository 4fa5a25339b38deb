package replay

import (
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
		return forced.Done() && forced.Source == int(forced.ForcedSrc)
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
	if f == nil || f.Rank != op.Rank || f.Seq != op.Seq || op.Peer != trace.AnySource {
		return false
	}
	op.Forced, op.ForcedSrc = true, int32(f.Src)
	d.out.Forced = op
	d.probe.probe = op
	return true
}

// probeDone notes the recorded status of the forced probe, at its Done
// event: the envelope of the receive that consumed the probed message.
func (d *driver) probeDone(r int, ev *trace.Event) {
	p := d.probe.probe
	if p == nil || p.Rank != r || p.Seq != ev.Seq || !ProbeFound(ev) || d.probe.consumer != nil {
		return
	}
	d.probe.follow = true
	d.probe.src, d.probe.tag, d.probe.comm = int(ev.Source), int(ev.StatusTag), p.Comm
}

// followProbe makes op, a receive being posted, follow the forced probe
// when it is the one that consumed the probed message: the rank's first
// receive after the probe whose source and tag are those the recorded
// probe's status gave, on its communicator. It becomes a receive from any
// source forced to the forced sender, as a forced AnySource receive is, so
// that the replay compares its match with the recorded one (a Race, which
// probeRace hands to the probe).
func (d *driver) followProbe(op *sim.Op) {
	p := &d.probe
	if !p.follow || op.Rank != p.probe.Rank || op.Peer != p.src || op.Tag != p.tag || op.Comm != p.comm {
		return
	}
	p.follow = false
	p.consumer = op
	op.Peer = trace.AnySource
	op.Forced, op.ForcedSrc = true, p.probe.ForcedSrc
}

// probeRace, at the end of a replay with a probe forced, makes the race of
// the receive that consumed the probed message the probe's: the probe found
// the message the recording's receive took, and the replay's (the forced
// sender's). A probe whose message no receive of the recorded envelope took
// has no race (nothing names the message it found).
func (d *driver) probeRace() {
	c := d.probe.consumer
	if c == nil {
		return
	}
	for i := range d.out.Races {
		if d.out.Races[i].Recv == c {
			d.out.Races[i].Recv = d.probe.probe
			return
		}
	}
}
