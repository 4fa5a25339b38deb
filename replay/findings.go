package replay

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/p2ptrace/p2ptrace/gpu/sim"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// The kinds of finding, as they appear in reports.
const (
	KindDeadlock         = "deadlock"
	KindHang             = "hang"
	KindUnmatchedSend    = "unmatched-send"
	KindTruncation       = "truncation"
	KindTypeMismatch     = "type-mismatch"
	KindCountMismatch    = "count-mismatch"
	KindCorruptedData    = "corrupted-data"
	KindInFlightMutation = "in-flight-mutation"
	KindMissingWait      = "missing-wait"
	KindReadyWithoutRecv = "ready-without-recv"
	KindMessageRace      = "message-race"
	KindUnsafeBuffering  = "unsafe-buffering"

	KindBufferOverlap, KindRequestLeak = "buffer-overlap", "request-leak" // from the MPI merge (recorder/mpi/rules.go)
)

// Causes of a finding.
const (
	CauseProgram = "program" // a latent bug of the program
	CauseFault   = "fault"   // explained by an injected fault
)

// OpRef names one op of a finding.
type OpRef struct {
	Rank int    `json:"rank"`
	Seq  uint64 `json:"seq"`
	Op   string `json:"op"`
	Peer int    `json:"peer"`
	Tag  int    `json:"tag"`
	Site string `json:"site"` // relative file:line
}

// Finding is one thing a run got wrong.
type Finding struct {
	Kind  string  `json:"kind"`
	Ranks []int   `json:"ranks"`
	Ops   []OpRef `json:"ops"`
	Cause string  `json:"cause"`
	Fault string  `json:"fault,omitempty"` // the injection that explains it (cause fault)
	// RevealedBy is the fault plan of the run that showed the finding ("" = as recorded).
	RevealedBy string   `json:"revealed_by,omitempty"`
	Message    string   `json:"message"`
	Hint       string   `json:"hint"`
	Cycle      []int    `json:"cycle,omitempty"`
	Candidates []string `json:"candidates,omitempty"`
	// Values of corrupted data (when the trace holds payloads): the index of
	// the first differing element, of type Dtype, and a window of elements
	// from WindowStart: what the receiver got and what was sent.
	FirstDiff   *int64   `json:"first_diff,omitempty"`
	Dtype       string   `json:"dtype,omitempty"`
	WindowStart *int64   `json:"window_start,omitempty"`
	Got         []string `json:"got,omitempty"`
	Want        []string `json:"want,omitempty"`
	// Seed is the replay seed that showed the finding (with --explore, the first).
	Seed *uint64 `json:"seed,omitempty"`
}

// Signature identifies a finding across runs: its kind and the sites of its ops.
func (f *Finding) Signature() string {
	var b strings.Builder
	b.WriteString(f.Kind)
	for _, o := range f.Ops {
		fmt.Fprintf(&b, "|%d:%s:%s", o.Rank, o.Op, o.Site)
	}
	return b.String()
}

// Report is the findings of a replay (or several, deduplicated).
type Report struct {
	Findings []Finding `json:"findings"`
	// AnySource is how check enumerated the alternative matches of AnySource
	// receives (nil for a replay).
	AnySource *Enumeration `json:"anysource,omitempty"`
}

var hints = map[string]string{
	KindDeadlock:         "reorder the calls so that one rank receives first, or use Sendrecv, or Isend+Irecv+Waitall",
	KindHang:             "check the peer rank and tag of the waiting call against the nearest candidate",
	KindUnmatchedSend:    "post a matching receive on the destination rank, or remove the send",
	KindTruncation:       "make the receive buffer at least as large as the largest message it can match",
	KindTypeMismatch:     "use the same datatype on both ends",
	KindCountMismatch:    "stream send and recv of a pair must have the same count and datatype",
	KindCorruptedData:    "do not write a send buffer until its request completed (Wait or Test)",
	KindInFlightMutation: "do not write a send buffer until its request completed (Wait or Test)",
	KindMissingWait:      "Wait (or Test until done) every request, and Synchronize every stream, before reusing buffers or finishing",
	KindReadyWithoutRecv: "post the receive before the ready send (e.g. behind a barrier), or use Send",
	KindMessageRace:      "receive from a specific source, or make the program independent of arrival order",
	KindUnsafeBuffering:  "the send completes only while the runtime buffers it: use Isend+Irecv+Waitall or Sendrecv, or reorder",
}

// Hint returns the fix hint of a kind.
func Hint(kind string) string { return hints[kind] }

// refEvent names an op by its recorded post event.
func refEvent(ev *trace.Event, site sim.SiteFunc) OpRef {
	r := OpRef{Rank: int(ev.Rank), Seq: ev.Seq, Op: ev.Op.String(), Peer: int(ev.Peer), Tag: int(ev.Tag)}
	if site != nil {
		r.Site = site(uintptr(ev.Site))
	}
	return r
}

func atSite(s string) string {
	if s == "" {
		return ""
	}
	return " at " + s
}

func ref(op *sim.Op, site sim.SiteFunc) OpRef {
	r := OpRef{Rank: op.Rank, Seq: op.Seq, Op: op.Kind.String(), Peer: op.Peer, Tag: op.Tag}
	if site != nil {
		r.Site = site(op.Site)
	}
	return r
}

// Explain turns a replay's outcome into findings. faultDesc describes the
// faults of the run ("" for none); sync says zero buffering was on; drops
// describes the messages a fault dropped ("" for none).
func Explain(out *Outcome, site sim.SiteFunc, faultDesc string, sync bool, drops string) []Finding {
	dropped := drops != ""
	var fs []Finding
	for i := range out.Problems {
		p := &out.Problems[i]
		f := Finding{Kind: string(p.Kind), Ranks: slices.Clone(p.Ranks), Cause: CauseProgram, Message: p.Message, Hint: hints[string(p.Kind)], Cycle: p.Cycle, Candidates: p.Candidates}
		for _, op := range p.Ops {
			f.Ops = append(f.Ops, ref(op, site))
		}
		if p.Kind == sim.KindDeadlock || p.Kind == sim.KindHang {
			f.Message = p.Format(site)
			switch {
			case dropped:
				// A lost message, not the program's waits, is the root: a hang.
				f.Kind, f.Cycle = KindHang, nil
				f.Cause, f.Fault = CauseFault, drops
				f.Hint = "the injected drop explains this hang: the receive never got its message; a real lossy transport would need a timeout or retry"
			case sync:
				f.Hint = "the recorded run completed only because sends were buffered (eager); with zero buffering it deadlocks: " + hints[KindDeadlock]
			}
		}
		fs = append(fs, f)
		if sync && !dropped && p.Kind == sim.KindDeadlock {
			for _, bl := range p.Blocked {
				for _, op := range append([]*sim.Op{bl.Call}, bl.Pending...) {
					if op.Kind.IsSend() && op.Mode == sim.Standard {
						fs = append(fs, Finding{Kind: KindUnsafeBuffering, Ranks: []int{op.Rank, op.Peer}, Ops: []OpRef{ref(op, site)}, Cause: CauseProgram,
							Message: fmt.Sprintf("rank %d: %s completes only if the runtime buffers it", op.Rank, sim.Describe(op)), Hint: hints[KindUnsafeBuffering]})
						break
					}
				}
			}
		}
	}
	for _, c := range out.Corrupted {
		f := Finding{Kind: KindCorruptedData, Ranks: []int{c.Recv.Rank, c.Send.Rank}, Ops: []OpRef{ref(c.Recv, site), ref(c.Send, site)},
			Cause: CauseProgram, Hint: hints[KindCorruptedData]}
		var b strings.Builder
		fmt.Fprintf(&b, "rank %d received data that rank %d's %s rewrote while it was in flight (hash at post differs from hash at completion)", c.Recv.Rank, c.Send.Rank, sim.Describe(c.Send))
		// The write is no runtime call: name the interval it happened in.
		sendAt := ref(c.Send, site).Site
		if w := c.Retired; w != nil {
			o := refEvent(w, site)
			f.Ops = append(f.Ops, o)
			fmt.Fprintf(&b, "\nthe buffer was written after the %s%s and before its %s%s returned", c.Send.Kind, atSite(sendAt), o.Op, atSite(o.Site))
		} else {
			fmt.Fprintf(&b, "\nthe buffer was written after the %s%s, whose request was never waited", c.Send.Kind, atSite(sendAt))
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
		f := Finding{Kind: KindMessageRace, Ranks: []int{r.Recv.Rank, r.RecordedRank, r.ReplayRank}, Ops: []OpRef{ref(r.Recv, site)},
			Cause: CauseProgram, Hint: hints[KindMessageRace]}
		recorded := fmt.Sprintf("rank %d's op %d", r.RecordedRank, r.RecordedSeq)
		if e := r.Recorded; e != nil {
			o := refEvent(e, site)
			f.Ops = append(f.Ops, o)
			recorded = fmt.Sprintf("rank %d's %s (op %d)%s", o.Rank, o.Op, o.Seq, atSite(o.Site))
		}
		replayed := fmt.Sprintf("rank %d's op %d", r.ReplayRank, r.ReplaySeq)
		if s := r.Replayed; s != nil {
			o := ref(s, site)
			f.Ops = append(f.Ops, o)
			replayed = fmt.Sprintf("rank %d's %s (op %d)%s", o.Rank, o.Op, o.Seq, atSite(o.Site))
		}
		f.Message = fmt.Sprintf("rank %d's %s matched %s when recorded but %s under replay: which send it gets depends on arrival order", r.Recv.Rank, sim.Describe(r.Recv), recorded, replayed)
		fs = append(fs, f)
	}
	for i := range fs {
		fs[i].RevealedBy = faultDesc
	}
	return fs
}

// Text renders the report for people.
func (r *Report) Text() string {
	var b strings.Builder
	if len(r.Findings) == 0 {
		b.WriteString("no findings\n")
	} else {
		fmt.Fprintf(&b, "%d finding(s)\n", len(r.Findings))
	}
	for i, f := range r.Findings {
		fmt.Fprintf(&b, "\n[%d] %s (cause: %s)", i+1, f.Kind, f.Cause)
		if f.RevealedBy != "" {
			fmt.Fprintf(&b, " under %s", f.RevealedBy)
			if f.Seed != nil {
				fmt.Fprintf(&b, " (seed %d)", *f.Seed)
			}
		}
		if f.Fault != "" {
			fmt.Fprintf(&b, "\n    explained by the injected fault: %s", f.Fault)
		}
		fmt.Fprintf(&b, "\n    %s\n", strings.ReplaceAll(f.Message, "\n", "\n    "))
		for _, o := range f.Ops {
			fmt.Fprintf(&b, "    rank %d op %d %s (peer %d, tag %d) at %s\n", o.Rank, o.Seq, o.Op, o.Peer, o.Tag, o.Site)
		}
		fmt.Fprintf(&b, "    hint: %s\n", f.Hint)
	}
	if e := r.AnySource; e != nil && e.CutShort {
		fmt.Fprintf(&b, "\nnote: the AnySource alternatives were cut short: %d of %d replayed (the cap is %d forced replays)\n", e.Replayed, e.Alternatives, e.Cap)
	}
	return b.String()
}

// JSON renders the report for tools: a document with a top-level findings array.
func (r *Report) JSON() ([]byte, error) {
	doc := *r
	if doc.Findings == nil {
		doc.Findings = []Finding{}
	}
	return json.MarshalIndent(doc, "", "  ")
}
