package main

import (
	"encoding/json"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

type showOptions struct {
	JSON   bool
	Events bool
	Rank   int
	Path   string
}

func newShowCmd(f *factory) *cobra.Command {
	opts := &showOptions{}
	cmd := &cobra.Command{
		Use:   "show [--json] [--events] [--rank R] <trace>",
		Short: "Summarize a trace, or list its ops",
		Long: `Show prints the header of a trace (status, format version, command line,
backend, link model) and the op counts of every rank. With --events it lists
every op of every rank: sequence number, op, peer, tag, bytes, request,
virtual post and done times, the matched peer op, payload hashes and call site.`,
		Example: `  p2ptrace show run.p2ptrace
  p2ptrace show --events --rank 1 run.p2ptrace
  p2ptrace show --json run.p2ptrace | jq .status`,
		Args: exactArgs(1, "one trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if !cmd.Flags().Changed("rank") {
				opts.Rank = -1
			}
			return runShow(f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a JSON document")
	cmd.Flags().BoolVar(&opts.Events, "events", false, "list the ops of every rank")
	cmd.Flags().IntVar(&opts.Rank, "rank", 0, "only this rank")
	return cmd
}

type rankSummary struct {
	Rank   int            `json:"rank"`
	Events int64          `json:"events"`
	Ops    map[string]int `json:"ops"`
}

type jsonOp struct {
	Rank      int32    `json:"rank"`
	Seq       uint64   `json:"seq"`
	Op        string   `json:"op"`
	Peer      *int32   `json:"peer,omitempty"`
	Tag       *int32   `json:"tag,omitempty"`
	Bytes     int64    `json:"bytes,omitempty"`
	Req       uint64   `json:"req,omitempty"`
	Reqs      []uint64 `json:"reqs,omitempty"`
	PostVT    int64    `json:"post_vt"`
	Done      bool     `json:"done"`
	MatchVT   *int64   `json:"match_vt,omitempty"`
	DoneVT    *int64   `json:"done_vt,omitempty"`
	MatchRank *int32   `json:"match_rank,omitempty"`
	MatchSeq  *uint64  `json:"match_seq,omitempty"`
	HashPost  string   `json:"hash_post,omitempty"`
	HashDone  string   `json:"hash_done,omitempty"`
	Site      string   `json:"site,omitempty"`
	Err       string   `json:"err,omitempty"`
}

type showJSON struct {
	Path          string       `json:"path"`
	FormatVersion int          `json:"format_version"`
	Status        trace.Status `json:"status"`
	Incomplete    bool         `json:"incomplete"`
	Message       string       `json:"message,omitempty"`
	// Findings are those the recording made, structured (FindingsVersion
	// 0: an older trace, whose findings are prose in Message).
	Findings        []verdict.Finding `json:"findings,omitempty"`
	FindingsVersion int               `json:"findings_version,omitempty"`
	Command         []string          `json:"command"`
	ToolVersion     string            `json:"tool_version"`
	Backend         string            `json:"backend"`
	EagerLimit      int64             `json:"eager_limit"`
	LatencyNS       int64             `json:"latency_ns"`
	BandwidthBps    float64           `json:"bandwidth_bytes_per_s"`
	Seed            uint64            `json:"seed"`
	HashMode        string            `json:"hash"`
	StartUnixNano   int64             `json:"start_unix_ns"`
	EndUnixNano     int64             `json:"end_unix_ns"`
	Ranks           int               `json:"ranks"`
	Devices         []string          `json:"devices,omitempty"` // each rank's tensor devices (Python recordings)
	Events          int64             `json:"events"`
	PerRank         []rankSummary     `json:"per_rank"`
	Ops             []jsonOp          `json:"ops,omitempty"`
}

func runShow(f *factory, opts *showOptions) error {
	r, err := openTrace(opts.Path)
	if err != nil {
		return err
	}
	defer r.Close()
	if opts.Rank >= r.Ranks() || opts.Rank < -1 {
		return usageErrorf("--rank %d: the trace has ranks 0 to %d", opts.Rank, r.Ranks()-1)
	}
	h := r.Header()
	doc := showJSON{
		Path: opts.Path, FormatVersion: h.FormatVersion, Status: h.Status, Incomplete: r.Incomplete(),
		Message: h.Message, Findings: h.Findings, FindingsVersion: h.FindingsVersion, Command: h.Command, ToolVersion: h.ToolVersion, Backend: h.Backend,
		EagerLimit: h.EagerLimit, LatencyNS: h.LatencyNS, BandwidthBps: h.BandwidthBps, Seed: h.Seed,
		HashMode: h.HashMode, StartUnixNano: h.StartUnixNano, EndUnixNano: h.EndUnixNano, Ranks: r.Ranks(),
		Devices: h.Devices,
	}
	if doc.Command == nil {
		doc.Command = []string{}
	}
	perRankOps := map[int][]opRec{}
	for rank := 0; rank < r.Ranks(); rank++ {
		if opts.Rank >= 0 && rank != opts.Rank {
			continue
		}
		ops, err := loadRank(r, rank)
		if err != nil {
			return err
		}
		s := rankSummary{Rank: rank, Ops: map[string]int{}}
		for _, op := range ops {
			s.Events++
			if op.HasDone {
				s.Events++
			}
			s.Ops[op.Post.Op.String()]++
		}
		doc.Events += s.Events
		doc.PerRank = append(doc.PerRank, s)
		if opts.Events {
			perRankOps[rank] = ops
			for _, op := range ops {
				doc.Ops = append(doc.Ops, toJSONOp(r, op))
			}
		}
	}
	if opts.JSON {
		if opts.Events && doc.Ops == nil {
			doc.Ops = []jsonOp{}
		}
		enc := json.NewEncoder(f.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(&doc)
	}
	printSummary(f.Out, &doc)
	if opts.Events {
		for _, s := range doc.PerRank {
			printEvents(f.Out, r, s.Rank, perRankOps[s.Rank])
		}
	}
	return nil
}

func hashString(h uint64) string {
	if h == 0 {
		return ""
	}
	return fmt.Sprintf("%016x", h)
}

func toJSONOp(r *trace.Reader, op opRec) jsonOp {
	p := op.Post
	j := jsonOp{Rank: p.Rank, Seq: p.Seq, Op: p.Op.String(), Bytes: p.Bytes, Req: p.Req, Reqs: p.Reqs,
		PostVT: p.PostVT, Done: op.HasDone, HashPost: hashString(p.HashPost)}
	if p.Op.IsSend() || p.Op.IsRecv() || p.Op == trace.OpProbe || p.Op == trace.OpIprobe {
		peer, tag := p.Peer, p.Tag
		j.Peer, j.Tag = &peer, &tag
	}
	if p.Site != 0 {
		j.Site = siteString(r, p.Site)
	}
	if op.HasDone {
		d := op.Done
		j.DoneVT, j.MatchVT = &d.DoneVT, &d.MatchVT
		if d.MatchRank >= 0 && (p.Op.IsSend() || p.Op.IsRecv()) {
			j.MatchRank, j.MatchSeq = &d.MatchRank, &d.MatchSeq
		}
		if d.HashPost != 0 {
			j.HashPost = hashString(d.HashPost)
		}
		j.HashDone = hashString(d.HashDone)
		j.Err = d.Err.String()
	}
	return j
}

func printSummary(w io.Writer, d *showJSON) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	status := string(d.Status)
	if d.Incomplete {
		status = "incomplete: the recording was cut short"
	}
	fmt.Fprintf(tw, "trace:\t%s\n", d.Path)
	fmt.Fprintf(tw, "status:\t%s\n", status)
	if d.Message != "" {
		fmt.Fprintf(tw, "message:\t%s\n", strings.ReplaceAll(d.Message, "\n", "\n\t"))
	}
	fmt.Fprintf(tw, "format version:\t%d\n", d.FormatVersion)
	if d.ToolVersion != "" {
		fmt.Fprintf(tw, "tool version:\t%s\n", d.ToolVersion)
	}
	fmt.Fprintf(tw, "command:\t%s\n", strings.Join(d.Command, " "))
	fmt.Fprintf(tw, "backend:\t%s\n", d.Backend)
	fmt.Fprintf(tw, "eager limit:\t%d bytes\n", d.EagerLimit)
	if d.LatencyNS != 0 || d.BandwidthBps != 0 {
		fmt.Fprintf(tw, "link:\t%d ns latency, %s bytes/s\n", d.LatencyNS, strconv.FormatFloat(d.BandwidthBps, 'g', -1, 64))
	}
	if d.HashMode != "" {
		fmt.Fprintf(tw, "hash:\t%s\n", d.HashMode)
	}
	if d.Seed != 0 {
		fmt.Fprintf(tw, "seed:\t%d\n", d.Seed)
	}
	if d.StartUnixNano != 0 {
		fmt.Fprintf(tw, "started:\t%s\n", time.Unix(0, d.StartUnixNano).UTC().Format(time.RFC3339))
		if d.EndUnixNano > d.StartUnixNano {
			fmt.Fprintf(tw, "duration:\t%s\n", time.Duration(d.EndUnixNano-d.StartUnixNano))
		}
	}
	fmt.Fprintf(tw, "ranks:\t%d\n", d.Ranks)
	if len(d.Devices) > 0 {
		var ds []string
		for r, dev := range d.Devices {
			if dev != "" {
				ds = append(ds, fmt.Sprintf("rank %d %s", r, dev))
			}
		}
		fmt.Fprintf(tw, "devices:\t%s\n", strings.Join(ds, ", "))
	}
	fmt.Fprintf(tw, "events:\t%d\n", d.Events)
	tw.Flush()
	if len(d.Findings) > 0 {
		rep := verdict.Report{Findings: d.Findings}
		fmt.Fprintf(w, "\nfindings while recording: %s", rep.Text())
	}

	// Op counts: a column per op that occurs, in op order.
	seen := map[string]trace.Op{}
	for op := trace.Op(1); op.Valid(); op++ {
		for _, s := range d.PerRank {
			if s.Ops[op.String()] > 0 {
				seen[op.String()] = op
			}
		}
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return seen[names[i]] < seen[names[j]] })
	for _, s := range d.PerRank { // ops of unknown numbers last
		for n := range s.Ops {
			if _, ok := seen[n]; !ok {
				seen[n] = trace.Op(255)
				names = append(names, n)
			}
		}
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "RANK\tEVENTS\t")
	for _, n := range names {
		fmt.Fprintf(tw, "%s\t", n)
	}
	fmt.Fprintln(tw)
	for _, s := range d.PerRank {
		fmt.Fprintf(tw, "%d\t%d\t", s.Rank, s.Events)
		for _, n := range names {
			fmt.Fprintf(tw, "%d\t", s.Ops[n])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func printEvents(w io.Writer, r *trace.Reader, rank int, ops []opRec) {
	fmt.Fprintf(w, "\nrank %d\n", rank)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tOP\tPEER\tTAG\tBYTES\tREQ\tPOST VT\tDONE VT\tMATCH\tHASH POST\tHASH DONE\tSITE\tERR")
	for _, op := range ops {
		j := toJSONOp(r, op)
		peer, tag := "-", "-"
		if j.Peer != nil {
			peer, tag = rankString(*j.Peer, "any"), rankString(*j.Tag, "any")
		}
		req := "-"
		if j.Req != 0 {
			req = fmt.Sprint(j.Req)
		} else if len(j.Reqs) > 0 {
			var s []string
			for _, q := range j.Reqs {
				s = append(s, fmt.Sprint(q))
			}
			req = strings.Join(s, ",")
		}
		done, match := "(pending)", "-"
		if j.DoneVT != nil {
			done = fmt.Sprint(*j.DoneVT)
		}
		if j.MatchRank != nil {
			match = fmt.Sprintf("%d:%d", *j.MatchRank, *j.MatchSeq)
		}
		bytes := "-"
		if j.Bytes != 0 || j.Peer != nil {
			bytes = fmt.Sprint(j.Bytes)
		}
		dash := func(s string) string {
			if s == "" {
				return "-"
			}
			return s
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n",
			j.Seq, j.Op, peer, tag, bytes, req, j.PostVT, done, match, dash(j.HashPost), dash(j.HashDone), dash(j.Site), dash(j.Err))
	}
	tw.Flush()
}
