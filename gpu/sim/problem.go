package sim

import (
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"slices"
	"strings"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Problem is something a run did wrong, found by the engine itself.
type Problem struct {
	Kind    verdict.Kind
	Ranks   []int
	Ops     []*Op // the culprit ops; for a stuck run, the call each blocked rank is in
	Message string
	// Stuck details: one line per blocked rank, the wait-for cycle if any
	// (ranks in order, first repeated at the end), and the nearest unmatched
	// candidates for the waits.
	Blocked    []Blocked
	Cycle      []int
	Candidates []string
	// candidateOps holds, by the index of its candidate, an op the
	// candidate names as "(op N)" (wildTook's wildcard receive): Finding
	// adds its site there.
	candidateOps map[int]*Op
	// Hint, when set, replaces the fix hint of Kind: a deadlock whose cycle
	// holds a collective is not fixed by reordering sends and receives.
	Hint string
	// Collective: the collective call a collective-mismatch is about.
	Collective *verdict.CollectiveCall
	// names is the vocabulary its ops are named in (the engine's
	// Config.Names; nil: the ops' own names).
	names *trace.Names
}

// The hints of deadlocks whose wait-for cycle holds ranks in collectives
// (verdict.Deadlock's own is about point-to-point calls).
const (
	collectivesHint = "call the collectives of each communicator in the same order on every rank: a collective may block until every member of its communicator has called it (MPI-3.1 sec. 5.13)"
	mixedCycleHint  = "a collective may block until every member of its communicator has called it: let no member wait, before calling it, in a send or receive whose peer is inside it (complete the exchange first, or make it nonblocking)"
)

// inCollective reports whether bl waits in a collective, or for a
// nonblocking one (a Wait on an Ibcast).
func inCollective(bl Blocked) bool {
	if bl.Call != nil && bl.Call.Kind.IsCollective() {
		return true
	}
	return slices.ContainsFunc(bl.Pending, func(op *Op) bool { return op.Kind.IsCollective() })
}

// cycleHint is the hint of a deadlock on cycle: "" for the kind's own
// when no rank of the cycle is blocked in a collective.
func cycleHint(cycle []int, blocked []Blocked) string {
	colls, others := 0, 0
	for _, r := range cycle[:len(cycle)-1] { // (the first is repeated at the end)
		for _, bl := range blocked {
			if bl.Rank != r {
				continue
			}
			if inCollective(bl) {
				colls++
			} else {
				others++
			}
		}
	}
	switch {
	case colls == 0:
		return ""
	case others == 0:
		return collectivesHint
	}
	return mixedCycleHint
}

// Blocked is one rank of a stuck run.
type Blocked struct {
	Rank    int
	Call    *Op   // the call the rank is blocked in
	Pending []*Op // the message ops that call waits for
	WaitsOn []int // ranks that could still unblock it
	// SyncOnly: Call is a collective that waits only because the sync
	// fault makes every collective synchronize (see collSyncOnly).
	SyncOnly bool
	// Polls: the rank is not blocked but polls (Call is its last poll, a
	// Test, Testall or Iprobe; Pending what it polls for) with nothing
	// able to answer it (see DefaultPollLimit).
	Polls bool
}

// SiteFunc renders a call-site handle as "file:line".
type SiteFunc func(site uintptr) string

// receives reports whether an op waits for a message by its envelope: a
// receive, or a probe (which does not consume it).
func receives(k trace.Op) bool { return k.IsRecv() || k == trace.OpProbe || k == trace.OpIprobe }

// Describe renders an op like "Send to rank 1 tag 0 (4194304 bytes)".
func Describe(op *Op) string { return DescribeIn(nil, op) }

// DescribeIn is Describe in the vocabulary names ("all_reduce ReduceOp.SUM
// (16 bytes)" for torch.distributed's; nil: the ops' own names).
func DescribeIn(names *trace.Names, op *Op) string {
	var b strings.Builder
	b.WriteString(names.Op(op.Kind))
	switch {
	case op.Kind.IsSend():
		fmt.Fprintf(&b, " to rank %d", op.Peer)
	case receives(op.Kind):
		if op.Peer == trace.AnySource {
			b.WriteString(" from any rank")
		} else {
			fmt.Fprintf(&b, " from rank %d", op.Peer)
		}
	case op.Kind == trace.OpBarrier || op.Kind == trace.OpIbarrier:
		if op.Comm != 0 {
			fmt.Fprintf(&b, " on comm %d", op.Comm)
		}
	case op.Kind.IsCollective():
		if r := reduceOp(op); r != trace.ReduceNone {
			b.WriteString(" " + names.Reduce(r))
		}
		if rooted(op.Kind) {
			fmt.Fprintf(&b, " %s %d", names.Root(op.Kind), op.Peer)
		}
		if op.Comm != 0 {
			fmt.Fprintf(&b, " on comm %d", op.Comm)
		}
		writeSize(&b, op)
	}
	if (op.Kind.IsSend() || receives(op.Kind)) && op.Comm != CommStreams {
		if op.Tag == trace.AnyTag {
			b.WriteString(" any tag")
		} else {
			fmt.Fprintf(&b, " tag %d", op.Tag)
		}
	}
	if op.Kind.IsSend() || op.Kind.IsRecv() {
		writeSize(&b, op)
	}
	return b.String()
}

// writeSize writes the size of op's message: its bytes, or, for a negative
// count (an invalid call, whose bytes are count times the extent: "-4
// bytes" says nothing a user wrote), the count the call passed.
func writeSize(b *strings.Builder, op *Op) {
	if op.Count < 0 {
		fmt.Fprintf(b, " (count %d)", op.Count)
		return
	}
	fmt.Fprintf(b, " (%d bytes)", op.Bytes)
}

// Ref names op for a finding, its site resolved by site (which may be nil).
func Ref(op *Op, site SiteFunc) verdict.OpRef { return RefIn(nil, op, site) }

// RefIn is Ref in the vocabulary names (see DescribeIn).
func RefIn(names *trace.Names, op *Op, site SiteFunc) verdict.OpRef {
	r := verdict.OpRef{Rank: int(op.Rank), Seq: op.Seq, Op: names.Op(op.Kind), Peer: int(op.Peer), Tag: int(op.Tag), Call: DescribeIn(names, op)}
	if site != nil {
		r.Site = site(op.Site)
	}
	return r
}

// Finding turns the problem into the finding every door reports (cause:
// program), with call sites resolved by site.
func (p *Problem) Finding(site SiteFunc) verdict.Finding {
	f := verdict.New(p.Kind, slices.Clone(p.Ranks), p.Message)
	if p.Hint != "" {
		f.Hint = p.Hint
	}
	if p.Collective != nil {
		c := *p.Collective
		f.Collective = &c
	}
	f.Cycle, f.Candidates = slices.Clone(p.Cycle), slices.Clone(p.Candidates)
	for i, op := range p.candidateOps {
		if at := RefIn(p.names, op, site).Site; at != "" {
			ref := fmt.Sprintf("(op %d)", op.Seq)
			f.Candidates[i] = strings.Replace(f.Candidates[i], ref, ref+" at "+at, 1)
		}
	}
	for _, op := range p.Ops {
		f.Ops = append(f.Ops, RefIn(p.names, op, site))
	}
	for _, bl := range p.Blocked {
		b := verdict.Blocked{Rank: bl.Rank, Call: RefIn(p.names, bl.Call, site), Polls: bl.Polls}
		if w := splitCall(&bl); w != nil {
			// One call made of a post and its wait (a blocking send
			// replayed as NCCL's stream send and wait): blocked in it.
			b.Call = RefIn(p.names, w, site)
			f.Blocked = append(f.Blocked, b)
			continue
		}
		for _, op := range bl.Pending {
			if op != bl.Call {
				b.Waiting = append(b.Waiting, RefIn(p.names, op, site))
			}
		}
		f.Blocked = append(f.Blocked, b)
	}
	return f
}

// splitCall returns the op a blocked wait waits for alone when both come
// from one call of the program (the same rank and site): a blocking call
// that a replay posts and then waits for (replay's NCCLSource turns a
// torch.distributed send into a stream send and a wait). nil otherwise.
func splitCall(bl *Blocked) *Op {
	c := bl.Call
	if c == nil || c.Kind != trace.OpWait || len(bl.Pending) != 1 {
		return nil
	}
	if op := bl.Pending[0]; op != c && op.Rank == c.Rank && op.Site != 0 && op.Site == c.Site {
		return op
	}
	return nil
}

// stuckProblem builds the deadlock/hang report of a run in which no rank can run.
func (e *Engine) stuckProblem() Problem {
	p := Problem{Kind: verdict.Hang}
	waits := map[int][]int{}
	crossComm := false // a candidate is on another communicator
	wildRace := false  // a wildcard receive took a stuck receive's message (wildTook)
	unstarted := false // a stuck op's peer never started the persistent request it needs (unstartedFor)
	for i := range e.ranks {
		rk := &e.ranks[i]
		if rk.state != stateBlocked {
			continue
		}
		bl := Blocked{Rank: rk.id, Call: rk.blockedIn, Polls: rk.wait == waitPoll}
		switch rk.wait {
		case waitPoll:
			bl.Pending = pollPending(rk)
		case waitStream:
			if !rk.waitSt.empty() {
				bl.Pending = append(bl.Pending, rk.waitSt.entries[0]...)
			}
		default:
			for _, op := range rk.waitOn {
				if op.bits&bitDone == 0 {
					bl.Pending = append(bl.Pending, op)
				}
			}
		}
		for _, op := range bl.Pending {
			if op.Kind.IsCollective() {
				bl.WaitsOn = append(bl.WaitsOn, e.collWaitsOn(op)...)
				bl.SyncOnly = bl.SyncOnly || e.collSyncOnly(op)
			} else if op.Peer == trace.AnySource {
				for j := range e.ranks {
					o := &e.ranks[j]
					if o.id != rk.id && o.state != stateDone {
						bl.WaitsOn = append(bl.WaitsOn, o.id)
					}
				}
			} else if op.Peer >= 0 && int(op.Peer) < len(e.ranks) {
				bl.WaitsOn = append(bl.WaitsOn, int(op.Peer))
			}
		}
		slices.Sort(bl.WaitsOn)
		bl.WaitsOn = slices.Compact(bl.WaitsOn)
		waits[rk.id] = bl.WaitsOn
		p.Blocked = append(p.Blocked, bl)
		p.Ranks = append(p.Ranks, rk.id)
		p.Ops = append(p.Ops, bl.Call)
		for _, op := range bl.Pending {
			if c, w := e.wildTook(op); w != nil {
				if p.candidateOps == nil {
					p.candidateOps = map[int]*Op{}
				}
				p.candidateOps[len(p.Candidates)] = w
				p.Candidates = append(p.Candidates, c)
				wildRace = true
			} else if c := e.unstartedFor(op); c != "" {
				p.Candidates = append(p.Candidates, c)
				unstarted = true
			} else if c, other := e.candidate(op); c != "" {
				p.Candidates = append(p.Candidates, c)
				crossComm = crossComm || other
			}
		}
	}
	p.Cycle = findCycle(p.Ranks, waits, e.ranks)
	if p.Cycle == nil {
		if m, ok := e.missedWhileStuck(p.Blocked); ok {
			return m
		}
	}
	if p.Cycle != nil {
		p.Kind = verdict.Deadlock
		parts := make([]string, len(p.Cycle))
		for i, r := range p.Cycle {
			parts[i] = fmt.Sprint(r)
		}
		p.Message = "no rank can progress; wait-for cycle: rank " + strings.Join(parts, " -> rank ")
		p.Hint = cycleHint(p.Cycle, p.Blocked)
		if unstarted {
			p.Hint = unstartedHint // (the cycle waits on a message never sent)
		}
		if crossComm {
			p.Hint = crossCommHint // (no order of the calls matches them)
		}
		if wildRace {
			p.Hint = wildRaceHint
		}
	} else {
		var why []string
		for _, bl := range p.Blocked {
			if bl.Polls {
				why = append(why, e.pollWhy(&bl))
				continue
			}
			for _, w := range bl.WaitsOn {
				if e.ranks[w].state == stateDone {
					why = append(why, fmt.Sprintf("rank %d waits on rank %d, which has finished", bl.Rank, w))
				} else {
					why = append(why, fmt.Sprintf("rank %d waits on rank %d", bl.Rank, w))
				}
			}
			if len(bl.WaitsOn) == 0 {
				why = append(why, fmt.Sprintf("rank %d waits for a message no rank can send", bl.Rank))
			}
		}
		p.Message = "no rank can progress; " + strings.Join(why, "; ")
		if len(p.Candidates) == 0 && pointToPointOnly(p.Blocked) {
			p.Hint = noCandidateHint // (the kind's hint speaks of a candidate)
		}
		if unstarted {
			p.Hint = unstartedHint
		}
		if crossComm {
			p.Hint = crossCommHint
		}
		if wildRace {
			p.Hint = wildRaceHint
		}
	}
	return p
}

// candidate names the nearest unmatched op that op could have meant to
// match; other says it is on another communicator than op's.
func (e *Engine) candidate(op *Op) (c string, other bool) {
	if receives(op.Kind) {
		me := &e.ranks[op.Rank]
		for s := range me.unexpected.all {
			if s.Comm == op.Comm {
				return fmt.Sprintf("rank %d sent tag %d to rank %d; rank %d waits for %s", s.Rank, s.Tag, op.Rank, op.Rank, e.describe(op)), false
			}
		}
		if op.Peer >= 0 && int(op.Peer) < len(e.ranks) {
			for i := range e.ranks {
				rk := &e.ranks[i]
				for s := range rk.unexpected.all {
					if s.Rank == op.Peer && s.Comm == op.Comm {
						return fmt.Sprintf("rank %d sent tag %d to rank %d, not to rank %d; rank %d waits for %s", s.Rank, s.Tag, rk.id, op.Rank, op.Rank, e.describe(op)), false
					}
				}
			}
		}
		// A message on another communicator (a dup or split of it, or the
		// world): MPI-3.1 sec. 3.5, communicators never mix. The peer's
		// first, else any (see otherComm).
		if s := otherComm(me.unexpected.all, op, func(s *Op) bool { return op.Peer == trace.AnySource || s.Rank == op.Peer }); s != nil {
			return fmt.Sprintf("rank %d sent tag %d to rank %d on %s; rank %d waits for %s on %s, and a message matches only a receive on its own communicator",
				s.Rank, s.Tag, op.Rank, commName(int(s.Comm)), op.Rank, e.describe(op), commName(int(op.Comm))), true
		}
		return "", false
	}
	if op.Kind.IsSend() && op.Peer >= 0 && int(op.Peer) < len(e.ranks) {
		dst := &e.ranks[op.Peer]
		for r := range dst.posted.all {
			if r.Comm == op.Comm {
				return fmt.Sprintf("rank %d posted %s; rank %d sends %s", r.Rank, e.describe(r), op.Rank, e.describe(op)), false
			}
		}
		if r := otherComm(dst.posted.all, op, func(r *Op) bool { return r.Peer == trace.AnySource || r.Peer == op.Rank }); r != nil {
			return fmt.Sprintf("rank %d posted %s on %s; rank %d sends %s on %s, and a message matches only a receive on its own communicator",
				r.Rank, e.describe(r), commName(int(r.Comm)), op.Rank, e.describe(op), commName(int(op.Comm))), true
		}
		if dst.state == stateDone {
			return fmt.Sprintf("rank %d sends %s, but rank %d has finished without receiving it", op.Rank, e.describe(op), dst.id), false
		}
	}
	return "", false
}

// unstartedFor names the persistent request that would have matched stuck
// op (sent the message a receive waits for, received what a send waits to
// hand over) and that its rank made and never started in the recorded run
// (Config.Unstarted): "" if none. A persistent request is inactive until
// MPI_Start starts it, and a Wait on an inactive request returns at once
// (MPI-3.1 sec. 3.9), so its rank went on without it.
func (e *Engine) unstartedFor(op *Op) string {
	for i := range e.cfg.Unstarted {
		u := &e.cfg.Unstarted[i]
		var req, verb string
		switch {
		case receives(op.Kind) && u.Op.IsSend() && u.Peer == int(op.Rank) && Accepts(op.Peer, op.Tag, op.Comm, int32(u.Rank), int32(u.Tag), int32(u.Comm)):
			req, verb = fmt.Sprintf("to rank %d tag %d", u.Peer, u.Tag), "sends"
		case op.Kind.IsSend() && u.Op.IsRecv() && u.Rank == int(op.Peer) && Accepts(int32(u.Peer), int32(u.Tag), int32(u.Comm), op.Rank, op.Tag, op.Comm):
			req, verb = fmt.Sprintf("from rank %d", u.Peer), "receives"
			if u.Peer == trace.AnySource {
				req = "from any rank"
			}
			if u.Tag == trace.AnyTag {
				req += " any tag"
			} else {
				req += fmt.Sprintf(" tag %d", u.Tag)
			}
		default:
			continue
		}
		if u.Comm != 0 {
			req += " on " + commName(u.Comm)
		}
		if u.Site != "" {
			req += " at " + u.Site
		}
		return fmt.Sprintf("rank %d's %s %s was never started: it would have matched rank %d's %s, and a persistent request %s nothing until started",
			u.Rank, u.Call, req, op.Rank, e.describe(op), verb)
	}
	return ""
}

// noCandidateHint is the hint of a hang of sends and receives with no
// candidate: nothing sent or posted comes near what the blocked calls wait
// for.
const noCandidateHint = "no rank sent a message the waiting call accepts (or posted a receive its send matches): check its peer rank, tag and communicator, and that the peer reaches the matching call"

// pointToPointOnly reports whether every blocked rank waits, without
// polling, for sends and receives alone.
func pointToPointOnly(blocked []Blocked) bool {
	for _, bl := range blocked {
		if bl.Polls || len(bl.Pending) == 0 {
			return false
		}
		for _, op := range bl.Pending {
			if !op.Kind.IsSend() && !receives(op.Kind) {
				return false
			}
		}
	}
	return true
}

// unstartedHint is the hint of a stuck run whose candidate is a persistent
// request never started (unstartedFor).
const unstartedHint = "start the persistent request (MPI_Start or MPI_Startall) before waiting on it: until started it is inactive, transfers nothing, and a Wait on it returns at once"

// wildMatch is a receive from any source that took a message: the
// receive, its Seq then (an op may be reused once released: the entry
// holds only while the op is still that receive), and the send's kind and
// envelope. (A receive of any tag from one source races with nothing:
// messages of one sender match in the order sent, MPI-3.1 sec. 3.5.)
type wildMatch struct {
	recv      *Op
	seq       uint64
	tag, comm int32
	sendKind  trace.Op
}

// noteWild remembers that r, a receive from any source, took send s (see
// wildTook). It runs at every such match, so it only stores: no copy, no
// map.
func (e *Engine) noteWild(s, r *Op) {
	rk := &e.ranks[r.Rank]
	if rk.wildFrom == nil {
		rk.wildFrom = make([]wildMatch, len(e.ranks))
	}
	rk.wildFrom[s.Rank] = wildMatch{recv: r, seq: r.Seq, tag: s.Tag, comm: s.Comm, sendKind: s.Kind}
}

// took returns the receive w names, nil if none or if its op has been
// reused since.
func (w *wildMatch) took(rank int) *Op {
	if r := w.recv; r != nil && int(r.Rank) == rank && r.Seq == w.seq && r.Peer == trace.AnySource {
		return r
	}
	return nil
}

// wildTook says, of a stuck receive op, whether a
// wildcard receive of its rank took the message it accepts while another
// message the wildcard accepts too still waits unreceived: had the
// wildcard taken that one, both receives would have matched. Both
// matchings are legal (MPI-3.1 sec. 3.5: a wildcard receive takes any
// message its envelope accepts), so which one the run made is a message
// race, and it decided the hang. It returns the candidate's words and a
// copy of the wildcard receive (nil: none).
func (e *Engine) wildTook(op *Op) (string, *Op) {
	me := &e.ranks[op.Rank]
	if me.wildFrom == nil || !receives(op.Kind) {
		return "", nil
	}
	// The senders whose message op would take: its source, or (a receive
	// from any source itself) each, in rank order.
	lo, hi := int(op.Peer), int(op.Peer)+1
	if op.Peer == trace.AnySource {
		lo, hi = 0, len(me.wildFrom)
	}
	for src := max(lo, 0); src < min(hi, len(me.wildFrom)); src++ {
		w := &me.wildFrom[src]
		wr := w.took(int(op.Rank))
		if wr == nil || !Accepts(op.Peer, op.Tag, op.Comm, int32(src), w.tag, w.comm) {
			continue
		}
		for u := range me.unexpected.all {
			if int(u.Rank) != src && Accepts(wr.Peer, wr.Tag, wr.Comm, u.Rank, u.Tag, u.Comm) {
				c := wr.Copy()
				return fmt.Sprintf("rank %d's %s (op %d) took rank %d's %s tag %d, the message rank %d's %s waits for, while rank %d's message tag %d, which it accepts too, waits unreceived: had it taken that one, both would have matched (which message a wildcard receive takes is a race, and it decided this)",
					op.Rank, e.describe(wr), wr.Seq, src, e.cfg.Names.Op(w.sendKind), w.tag, op.Rank, e.describe(op), u.Rank, u.Tag), &c
			}
		}
	}
	return "", nil
}

// otherComm returns the first op of ops on a communicator other than op's
// (neither of them a stream's) for which peer holds, else the first on
// another communicator at all: a split may number its ranks otherwise than
// the world does, so the peer a call names in its communicator need not be
// the other side's world rank (a split that reverses the ranks, one side
// left on the world: MPI-3.1 sec. 6.4.2).
func otherComm(ops func(func(*Op) bool), op *Op, peer func(*Op) bool) *Op {
	var first *Op
	for o := range ops {
		if o.Comm == op.Comm || o.Comm == CommStreams || op.Comm == CommStreams {
			continue
		}
		if peer(o) {
			return o
		}
		if first == nil {
			first = o
		}
	}
	return first
}

// wildRaceHint is the hint of a stuck run whose receive's message a
// wildcard receive took (wildTook).
const wildRaceHint = "give the wildcard receive a source (or a tag) that excludes the other receive's message, or post the receive that names its source before the wildcard one: a message matches the first posted receive that accepts it"

// crossCommHint is the hint of a stuck run whose waits have candidates on
// other communicators.
const crossCommHint = "send and receive on the same communicator: a message sent on one (the world, a dup, a split) is never received on another"

// commName names communicator c in a candidate: "the world" (0), else by
// its id, as Describe does.
func commName(c int) string {
	if c == 0 {
		return "the world"
	}
	return fmt.Sprintf("comm %d", c)
}

// findCycle returns a cycle of the wait-for graph among blocked ranks, or nil.
func findCycle(blocked []int, waits map[int][]int, ranks []rank) []int {
	const (
		white = iota
		grey
		black
	)
	color := map[int]int{}
	var stack []int
	var found []int
	var visit func(r int) bool
	visit = func(r int) bool {
		color[r] = grey
		stack = append(stack, r)
		for _, w := range waits[r] {
			if ranks[w].state != stateBlocked || ranks[w].wait == waitPoll {
				continue // (a rank that polls is in no wait-for cycle: a hang)
			}
			switch color[w] {
			case grey:
				i := slices.Index(stack, w)
				found = append(append([]int(nil), stack[i:]...), w)
				return true
			case white:
				if visit(w) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[r] = black
		return false
	}
	for _, r := range blocked {
		if color[r] == white && visit(r) {
			return found
		}
	}
	return nil
}

// missedWhileStuck is the collective-mismatch of a stuck run whose blocked
// ranks wait in a collective that the other members finished without
// calling (see missedBy): the missing call is the bug, the hang its effect.
// The blocked ranks stay in the finding, to say where they wait.
func (e *Engine) missedWhileStuck(blocked []Blocked) (Problem, bool) {
	for _, bl := range blocked {
		for _, op := range bl.Pending {
			if !op.Kind.IsCollective() {
				continue
			}
			k, in := e.collGen(op)
			if in == nil {
				continue
			}
			if missed := e.missedBy(int(op.Comm), e.comms[int(op.Comm)], in); len(missed) > 0 {
				p := e.missingProblem(int(op.Comm), k, in, missed)
				p.Blocked = blocked
				return p, true
			}
		}
	}
	return Problem{}, false
}
