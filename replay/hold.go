package replay

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// Ready sends. MPI-3.1 sec. 3.4: "a send that uses the ready communication
// mode may be started only if the matching receive is already posted". A
// correct program makes sure of it by synchronization (the receiver posts,
// then tells the sender: a message, a barrier), not by timing: a run whose
// receive happened to be posted first proves nothing, as the next run may
// post it late. So a replay as recorded, whose timing is the run's, is no
// judge; a replay that holds the receiver back just before it posts the
// receive is. Held back, the receiver's later calls wait too, and with them
// every message and collective call that would tell the sender it posted:
// if the send still starts before the receive is posted, nothing but
// timing ordered them, and the engine's rule (a ready send that finds no
// posted receive) reports it. If something did order them, the send waits
// for the held rank, and the replay is clean.
//
// Every door judges a ready send this way, with this code: check's battery
// and the harness's (Check) run one held replay per ready send (up to
// MaxHeldReplays), and `p2ptrace record` runs them on the trace it wrote
// (Trace.ReadySendFindings), a Go program's and an MPI job's alike.

// HeldPost names a call of the trace, by rank and op sequence number, that
// a replay holds back (Config.Hold): the rank waits HoldTime of virtual time
// just before making it, while every other rank goes on as far as it can.
type HeldPost struct {
	Rank int
	Seq  uint64
}

// HoldTime is how long, in virtual ns, a held rank waits before its held
// call: about 13 days, far past the end of any recorded run, so that the
// other ranks have gone as far as they can without it when it goes on.
const HoldTime = int64(1) << 50

// MaxHeldReplays caps the held replays of one check (or recording): one
// per distinct pair of a ready send's call site and its receive's first,
// then the others in trace order.
const MaxHeldReplays = 16

// String is "RANK:SEQ", the form ParseHeldPost reads (and p2ptrace replay
// --hold-post takes).
func (h HeldPost) String() string { return fmt.Sprintf("%d:%d", h.Rank, h.Seq) }

// ParseHeldPost reads "RANK:SEQ": rank RANK's call number SEQ (its op
// sequence number in the trace).
func ParseHeldPost(s string) (HeldPost, error) {
	bad := fmt.Errorf("held post %q: want RANK:SEQ, e.g. 1:3 (rank 1 held back before its op 3)", s)
	r, seq, ok := strings.Cut(s, ":")
	if !ok {
		return HeldPost{}, bad
	}
	rk, err1 := strconv.ParseUint(r, 10, 31)
	sq, err2 := strconv.ParseUint(seq, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return HeldPost{}, fmt.Errorf("%w: %w", bad, err)
	}
	return HeldPost{Rank: int(rk), Seq: sq}, nil
}

// readySend is a ready send of the trace and the receive that took it when
// recorded.
type readySend struct {
	send, recv         HeldPost
	sendSite, recvSite uint32
	recvOp             trace.Op
}

// readyScan finds a trace's ready sends (Rsend, Irsend; a started
// persistent ready send is recorded as an Irsend) and the receives that
// took them when recorded, reading the events rank after rank twice: see
// on the first reading finds the ready sends, seeRecv on the second the
// receives whose Done names one (a send's own Done may not name its
// receive: an eager send completes before it is matched). It keeps nothing
// for a trace without ready sends.
type readyScan struct {
	ready   map[HeldPost]uint32 // the ready sends: their site
	posted  map[uint64]postedRecv
	postedR int // the rank of posted's receives
	sends   []readySend
}

// postedRecv is a receive of the rank being read whose Done is not read yet.
type postedRecv struct {
	site uint32
	op   trace.Op
}

func (s *readyScan) see(r int, ev *trace.Event) {
	if ev.Kind == trace.KindPost && (ev.Op == trace.OpRsend || ev.Op == trace.OpIrsend) {
		if s.ready == nil {
			s.ready = map[HeldPost]uint32{}
		}
		s.ready[HeldPost{r, ev.Seq}] = ev.Site
	}
}

// wantsRecvs says whether seeRecv has receives to find.
func (s *readyScan) wantsRecvs() bool { return len(s.ready) > 0 }

// seeRecv notes a receive that took a ready send.
func (s *readyScan) seeRecv(r int, ev *trace.Event) {
	if s.posted == nil || s.postedR != r {
		s.posted, s.postedR = map[uint64]postedRecv{}, r
	}
	if ev.Kind == trace.KindPost {
		if ev.Op.IsRecv() || ev.Op == trace.OpSendrecv {
			s.posted[ev.Seq] = postedRecv{ev.Site, ev.Op}
		}
		return
	}
	p, ok := s.posted[ev.Seq]
	if !ok {
		return
	}
	delete(s.posted, ev.Seq)
	if ev.MatchRank < 0 || ev.Flag {
		return // never matched, or cancelled
	}
	send := HeldPost{int(ev.MatchRank), ev.MatchSeq}
	if site, ok := s.ready[send]; ok {
		s.sends = append(s.sends, readySend{send: send, sendSite: site, recv: HeldPost{r, ev.Seq}, recvSite: p.site, recvOp: p.op})
	}
}

// held picks the ready sends to replay held: first one per distinct pair
// of the send's and the receive's call sites (a loop of ready sends at one
// line is one question), then the others in trace order, up to limit. It
// also says how many it left out.
func (s *readyScan) held(limit int) ([]readySend, int) {
	type sites struct{ send, recv uint32 }
	seen := map[sites]bool{}
	var first, rest []readySend
	for _, rs := range s.sends {
		k := sites{rs.sendSite, rs.recvSite}
		if !seen[k] {
			seen[k] = true
			first = append(first, rs)
		} else {
			rest = append(rest, rs)
		}
	}
	picked := append(first, rest...)
	left := 0
	if len(picked) > limit {
		left = len(picked) - limit
		picked = picked[:limit]
	}
	slices.SortFunc(picked, func(a, b readySend) int {
		return cmp.Or(cmp.Compare(a.send.Rank, b.send.Rank), cmp.Compare(a.send.Seq, b.send.Seq))
	})
	return picked, left
}

// readySends reads the trace for its ready sends (see readyScan).
func readySends(open Opener) (*readyScan, error) {
	var s readyScan
	for pass := range 2 {
		if pass == 1 && !s.wantsRecvs() {
			break
		}
		src, err := open()
		if err != nil {
			return nil, err
		}
		var ev trace.Event
		for r := range src.Ranks() {
			for src.Next(r, &ev) {
				if pass == 0 {
					s.see(r, &ev)
				} else {
					s.seeRecv(r, &ev)
				}
			}
		}
		if err := src.Err(); err != nil {
			return nil, fmt.Errorf("finding the ready sends: %w", err)
		}
	}
	return &s, nil
}

// heldJobs are the battery's held replays of the ready sends s picked,
// and a note when the cap left some out.
func heldJobs(s *readyScan, limit int) ([]replayJob, string) {
	picked, left := s.held(limit)
	jobs := make([]replayJob, len(picked))
	for i := range picked {
		jobs[i] = replayJob{ready: &picked[i]}
	}
	note := ""
	if left > 0 {
		note = fmt.Sprintf("ready sends: %d more were not replayed with their receive held back (at most %d replays)", left, limit)
	}
	return jobs, note
}

// judgeHeld keeps of a held replay's findings its ready sends that found no
// receive posted: what the hold is there to show. The held send's finding
// says why it is one (what else the replay found, the battery's other
// replays find without the hold).
func judgeHeld(rs *readySend, fs []Finding, names *trace.Names, site sim.SiteFunc) []Finding {
	fs = slices.DeleteFunc(fs, func(f Finding) bool { return f.Kind != verdict.ReadyWithoutRecv })
	for i := range fs {
		f := &fs[i]
		if len(f.Ops) == 0 || f.Ops[0].Rank != rs.send.Rank || f.Ops[0].Seq != rs.send.Seq {
			continue
		}
		s := f.Ops[0]
		f.Message = fmt.Sprintf("rank %d: ready send (%s%s) to rank %d tag %d, but nothing orders rank %d's matching receive (%s%s) before it: "+
			"held back just before that receive, rank %d had not posted it when the send started, so only timing posts it first "+
			"(MPI-3.1 sec. 3.4: a ready send may be started only if the matching receive is already posted)",
			s.Rank, s.Op, atSite(s.Site), s.Peer, s.Tag, rs.recv.Rank, names.Op(rs.recvOp), atSite(site(uintptr(rs.recvSite))), rs.recv.Rank)
	}
	return verdict.Dedup(fs)
}

// ReadySendFindings judges the trace's ready sends by synchronization, as
// check does: one replay per ready send (up to MaxHeldReplays), with the
// rank of its matching receive held back just before that receive. The
// findings are the ready sends that started before their receive was
// posted in one of those replays.
func (t *Trace) ReadySendFindings() ([]Finding, error) {
	s, err := readySends(t.OpenDirect)
	if err != nil || len(s.sends) == 0 {
		return nil, err
	}
	jobs, _ := heldJobs(s, MaxHeldReplays)
	results, err := runJobs(t.OpenDirect, t.Config(), t.Site, jobs, enumerated{}, CheckOptions{WorkerOpener: t.reopen})
	if err != nil {
		return nil, err
	}
	var set verdict.Set
	for _, res := range results {
		set.Add(res.findings...)
	}
	return set.Findings(), nil
}
