package verdict

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RankEnd says where a rank's record ends in a trace that was cut short
// (the recorder or the program killed, interrupted, crashed, stopped as
// hung): what the rank had pending there is an effect of the cut, not a
// finding.
type RankEnd struct {
	Rank int `json:"rank"`
	// Last is the rank's last recorded call (nil if it made none).
	Last *OpRef `json:"last,omitempty"`
	// Why: the trace's status, in words ("the recording was cut short
	// (killed?)", "the run was interrupted", "the rank crashed", ...).
	Why string `json:"why"`
}

// Enumeration says how check enumerated the alternative matches of the
// trace's AnySource receives.
type Enumeration struct {
	// Receives is the number of AnySource receives that matched when recorded.
	Receives int `json:"receives"`
	// Probes is the number of AnySource probes (Probe, Iprobe) that found a
	// message when recorded; their alternatives count with the receives'.
	Probes int `json:"probes,omitempty"`
	// Alternatives is the number of (receive, other sender) pairs: a sender
	// other than the recorded one sent to the receiver, on the receive's
	// communicator, with a tag it accepts.
	Alternatives int `json:"alternatives"`
	// Replayed is the number of alternatives replayed with the match forced.
	Replayed int `json:"replayed"`
	// Illegal is the number of replayed alternatives that were no legal
	// execution (the forced receive never matched): they are not reported.
	Illegal int `json:"illegal"`
	// Cap is the most forced replays one check runs.
	Cap int `json:"cap"`
	// CutShort says the cap left alternatives untried.
	CutShort bool `json:"cut_short"`
}

// Report is the findings of a run, a replay, or several deduplicated.
type Report struct {
	Findings []Finding `json:"findings"`
	// Ends says where the record of each rank cut short ends (cut traces).
	Ends []RankEnd `json:"record_ends,omitempty"`
	// AnySource is how check enumerated the alternative matches of
	// AnySource receives (nil for a replay).
	AnySource *Enumeration `json:"anysource,omitempty"`
	// Notes are what is worth knowing and no finding (a nondeterministic
	// receive whose alternatives all ran clean, a race left unconfirmed).
	Notes []string `json:"notes,omitempty"`
	// Comms are the communicators the findings name by id ("comm
	// 2114772471": an MPI job's ids are hashes), with their members
	// (NamedComms).
	Comms []Comm `json:"comms,omitempty"`
}

// Comm is a communicator other than the world, by its id in the trace, and
// the world ranks of its members.
type Comm struct {
	ID    int   `json:"id"`
	Ranks []int `json:"ranks"`
	// Made is the call that made it, and where ("MPI_Comm_split at
	// a.c:12"; "" = not known).
	Made string `json:"made,omitempty"`
}

// NamedComms returns the communicators of all that the text of fs names
// ("comm ID", as the findings write one), in all's order.
func NamedComms(fs []Finding, all []Comm) []Comm {
	if len(all) == 0 || len(fs) == 0 {
		return nil
	}
	var b strings.Builder
	for i := range fs {
		fs[i].write(&b, i+1)
	}
	text := b.String()
	var named []Comm
	for _, c := range all {
		if namesComm(text, c.ID) {
			named = append(named, c)
		}
	}
	return named
}

// namesComm reports whether text holds "comm ID" not followed by a digit.
func namesComm(text string, id int) bool {
	word := fmt.Sprintf("comm %d", id)
	for i := 0; ; {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return false
		}
		end := i + j + len(word)
		if end == len(text) || text[end] < '0' || text[end] > '9' {
			return true
		}
		i = end
	}
}

// WriteComms writes the lines that say who the members of comms are (the
// legend under findings that name communicators by id).
func WriteComms(b *strings.Builder, comms []Comm) {
	if len(comms) == 0 {
		return
	}
	b.WriteString("\ncommunicators named above (their members' world ranks):\n")
	for _, c := range comms {
		ranks := make([]string, len(c.Ranks))
		for i, r := range c.Ranks {
			ranks[i] = fmt.Sprint(r)
		}
		fmt.Fprintf(b, "    comm %d: ranks %s", c.ID, strings.Join(ranks, ", "))
		if c.Made != "" {
			b.WriteString(", made by " + c.Made)
		}
		b.WriteString("\n")
	}
}

// Text renders the report for people: a count line, then each finding.
func (r *Report) Text() string {
	var b strings.Builder
	if len(r.Findings) == 0 {
		b.WriteString("no findings\n")
	} else {
		fmt.Fprintf(&b, "%d finding(s)\n", len(r.Findings))
	}
	for i := range r.Findings {
		b.WriteString("\n")
		r.Findings[i].write(&b, i+1)
	}
	WriteComms(&b, r.Comms)
	writeEnds(&b, r.Ends)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\nnote: %s\n", n)
	}
	if e := r.AnySource; e != nil && e.CutShort {
		fmt.Fprintf(&b, "\nnote: the AnySource alternatives were cut short: %d of %d replayed (the cap is %d forced replays)\n", e.Replayed, e.Alternatives, e.Cap)
	}
	return b.String()
}

// writeEnds writes where each rank's record of a trace cut short ends.
// The reason is the trace's, mostly the same for every rank: then it is
// said once, in the heading, not on every rank's line.
func writeEnds(b *strings.Builder, ends []RankEnd) {
	if len(ends) == 0 {
		return
	}
	same := true
	for _, e := range ends[1:] {
		same = same && e.Why == ends[0].Why
	}
	if same {
		fmt.Fprintf(b, "\nthe trace was cut short: %s; where each rank's record ends (what was pending there is not reported):\n", ends[0].Why)
	} else {
		b.WriteString("\nthe trace was cut short; where each rank's record ends (what was pending there is not reported):\n")
	}
	for _, e := range ends {
		fmt.Fprintf(b, "    rank %d: ", e.Rank)
		if e.Last != nil {
			fmt.Fprintf(b, "after op %d %s%s", e.Last.Seq, callOf(*e.Last), atSite(e.Last.Site))
		} else {
			// (A call the trace lacks may be named above: one made
			// before MPI_Init, which the shim notes but does not trace.)
			b.WriteString("before its first recorded call")
		}
		if !same {
			fmt.Fprintf(b, ": %s", e.Why)
		}
		b.WriteString("\n")
	}
}

// Text renders one finding as Report.Text does, numbered n.
func (f *Finding) Text(n int) string {
	var b strings.Builder
	f.write(&b, n)
	return b.String()
}

func (f *Finding) write(b *strings.Builder, n int) {
	fmt.Fprintf(b, "[%d] %s (cause: %s)", n, f.Kind, f.Cause)
	if f.RevealedBy != "" {
		fmt.Fprintf(b, " under %s", f.RevealedBy)
		if f.Seed != nil {
			fmt.Fprintf(b, " (seed %d)", *f.Seed)
		}
	}
	if f.Fault != "" {
		fmt.Fprintf(b, "\n    explained by the injected fault: %s", f.Fault)
	}
	fmt.Fprintf(b, "\n    %s\n", strings.ReplaceAll(f.Message, "\n", "\n    "))
	for _, bl := range f.Blocked {
		verb := "blocked in"
		if bl.Polls {
			verb = "polls without success in"
		}
		fmt.Fprintf(b, "    rank %d %s %s%s\n", bl.Rank, verb, callOf(bl.Call), atSite(bl.Call.Site))
		for _, w := range bl.Waiting {
			fmt.Fprintf(b, "        waiting for %s%s\n", callOf(w), atSite(w.Site))
		}
	}
	for _, c := range f.Candidates {
		fmt.Fprintf(b, "    nearest candidate: %s\n", c)
	}
	if len(f.Blocked) == 0 {
		for _, o := range f.Ops {
			if o.Untraced {
				fmt.Fprintf(b, "    rank %d: %s%s\n", o.Rank, callOf(o), atSite(o.Site))
			} else if o.Call != "" {
				fmt.Fprintf(b, "    rank %d op %d: %s%s\n", o.Rank, o.Seq, o.Call, atSite(o.Site))
			} else {
				fmt.Fprintf(b, "    rank %d op %d %s (peer %d, tag %d)%s\n", o.Rank, o.Seq, o.Op, o.Peer, o.Tag, atSite(o.Site))
			}
		}
	}
	fmt.Fprintf(b, "    hint: %s\n", f.Hint)
}

// JSON renders the report for tools: a document with a top-level findings array.
func (r *Report) JSON() ([]byte, error) {
	doc := *r
	if doc.Findings == nil {
		doc.Findings = []Finding{}
	}
	return json.MarshalIndent(doc, "", "  ")
}

func callOf(o OpRef) string {
	if o.Call != "" {
		return o.Call
	}
	return o.Op
}

func atSite(s string) string {
	if s == "" {
		return ""
	}
	return " at " + s
}
