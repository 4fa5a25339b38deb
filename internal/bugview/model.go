package bugview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// Model is what the page and the DOT graph show: the trace's ops, rank by
// rank, and the findings.
type Model struct {
	Title   string   `json:"title"`   // the trace path
	Command string   `json:"command"` // the recorded command line
	Status  string   `json:"status"`
	Ranks   int      `json:"ranks"`
	Ops     int      `json:"ops"`
	EndVT   int64    `json:"end_vt"`   // the last virtual time of the run, ns
	OpNames []string `json:"op_names"` // Lane.Op indexes these
	Sites   []string `json:"sites"`    // Lane.Site indexes these; 0 is unknown
	Lanes   []Lane   `json:"lanes"`
	// Findings are the replay's, in report order.
	Findings []Finding `json:"findings"`
	// Source says where the findings come from ("replay as recorded", "check").
	Source string `json:"source"`
}

// Lane is one rank's ops in program order, as columns (compact in JSON for
// a million ops).
type Lane struct {
	Rank  int      `json:"rank"`
	Seq   []uint64 `json:"seq"`
	Op    []int    `json:"op"`
	Post  []int64  `json:"post"` // virtual ns
	Done  []int64  `json:"done"` // virtual ns; -1 never completed
	Peer  []int32  `json:"peer"` // -1 any source; for non-message ops -2
	Tag   []int32  `json:"tag"`
	Bytes []int64  `json:"bytes"`
	Site  []int    `json:"site"`
}

// OpRef names one op of a finding.
type OpRef struct {
	Rank int    `json:"rank"`
	Seq  uint64 `json:"seq"`
	Op   string `json:"op"`
	Peer int    `json:"peer"`
	Tag  int    `json:"tag"`
	Site string `json:"site"`
	// Untraced: not an op of the trace (verdict.OpRef.Untraced): no op number.
	Untraced bool `json:"untraced,omitempty"`
}

// Finding is one finding as the page lists it.
type Finding struct {
	Kind       string   `json:"kind"`
	Cause      string   `json:"cause"`
	RevealedBy string   `json:"revealed_by"`
	Message    string   `json:"message"`
	Hint       string   `json:"hint"`
	Ranks      []int    `json:"ranks"`
	Ops        []OpRef  `json:"ops"`
	Cycle      []int    `json:"cycle"`
	Candidates []string `json:"candidates"`
	// Highlight is the ranks the page marks on selection: the wait-for cycle
	// when there is one, else the finding's ranks.
	Highlight []int `json:"highlight"`
	// Graph is the wait-for graph of a deadlock or hang (nil otherwise).
	Graph *WaitGraph `json:"-"`
}

// FromReplay converts replay findings: the one place that reads them.
func FromReplay(fs []replay.Finding) []Finding {
	out := make([]Finding, 0, len(fs))
	for _, f := range fs {
		v := Finding{Kind: string(f.Kind), Cause: f.Cause, RevealedBy: f.RevealedBy, Message: f.Message, Hint: f.Hint,
			Ranks: slices.Clone(f.Ranks), Cycle: slices.Clone(f.Cycle), Candidates: slices.Clone(f.Candidates)}
		if v.RevealedBy == "" {
			v.RevealedBy = "as recorded"
		}
		if f.Seed != nil {
			v.RevealedBy += fmt.Sprintf(" (seed %d)", *f.Seed)
		}
		for _, o := range f.Ops {
			v.Ops = append(v.Ops, OpRef{Rank: o.Rank, Seq: o.Seq, Op: o.Op, Peer: o.Peer, Tag: o.Tag, Site: o.Site, Untraced: o.Untraced})
		}
		v.Highlight = uniq(f.Ranks)
		if len(f.Cycle) > 0 {
			v.Highlight = uniq(f.Cycle)
		}
		if f.Kind.Stuck() {
			v.Graph = waitGraph(&v)
		}
		out = append(out, v)
	}
	return out
}

// Events is what Build reads a trace through (replay.Source does).
type Events interface {
	Ranks() int
	Next(rank int, ev *trace.Event) bool
	Err() error
}

// Build reads every rank's events and makes the model of the trace at
// title with its findings. site renders a site id as file:line ("" unknown).
func Build(title string, hdr trace.Header, src Events, site func(uintptr) string, fs []Finding, source string) (*Model, error) {
	m := &Model{Title: title, Command: strings.Join(hdr.Command, " "), Status: string(hdr.Status), Ranks: src.Ranks(),
		Sites: []string{""}, Findings: fs, Source: source}
	if m.Findings == nil {
		m.Findings = []Finding{}
	}
	ops := map[trace.Op]int{}
	names := trace.NamesOf(&hdr) // ops named in the trace's vocabulary (a torch trace's "all_reduce")
	sites := map[uint32]int{0: 0}
	var ev trace.Event
	for rank := range src.Ranks() {
		l := Lane{Rank: rank}
		index := map[uint64]int{}
		for src.Next(rank, &ev) {
			switch ev.Kind {
			case trace.KindPost:
				oi, ok := ops[ev.Op]
				if !ok {
					oi = len(m.OpNames)
					ops[ev.Op] = oi
					m.OpNames = append(m.OpNames, names.Op(ev.Op))
				}
				si, ok := sites[ev.Site]
				if !ok {
					si = len(m.Sites)
					sites[ev.Site] = si
					m.Sites = append(m.Sites, site(uintptr(ev.Site)))
				}
				peer := ev.Peer
				if !ev.Op.IsSend() && !ev.Op.IsRecv() && ev.Op != trace.OpProbe && ev.Op != trace.OpIprobe {
					peer = -2
				}
				index[ev.Seq] = len(l.Seq)
				l.Seq = append(l.Seq, ev.Seq)
				l.Op = append(l.Op, oi)
				l.Post = append(l.Post, ev.PostVT)
				l.Done = append(l.Done, -1)
				l.Peer = append(l.Peer, peer)
				l.Tag = append(l.Tag, ev.Tag)
				l.Bytes = append(l.Bytes, ev.Bytes)
				l.Site = append(l.Site, si)
				m.EndVT = max(m.EndVT, ev.PostVT)
			case trace.KindDone:
				if i, ok := index[ev.Seq]; ok {
					l.Done[i] = ev.DoneVT
					m.EndVT = max(m.EndVT, ev.DoneVT)
				}
			}
		}
		if err := src.Err(); err != nil {
			return nil, err
		}
		m.Ops += len(l.Seq)
		m.Lanes = append(m.Lanes, l)
	}
	return m, nil
}

func uniq(xs []int) []int {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
