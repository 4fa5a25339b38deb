package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

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
	// Cancelled: a message op whose cancel took (MPI_Cancel): it matched nothing.
	Cancelled bool `json:"cancelled,omitempty"`
	// ReduceOp: a reduction collective's op ("MPI_SUM"), when recorded.
	ReduceOp string `json:"reduce_op,omitempty"`
	// code is Op's trace op: the text names it in the trace's vocabulary
	// (a torch trace's "all_reduce"); the JSON keeps the trace op's name.
	code trace.Op
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
	// Comms are the communicators the findings name by id, with their
	// members' world ranks.
	Comms         []verdict.Comm `json:"comms,omitempty"`
	Command       []string       `json:"command"`
	ToolVersion   string         `json:"tool_version"`
	Backend       string         `json:"backend"`
	EagerLimit    int64          `json:"eager_limit"`
	LatencyNS     int64          `json:"latency_ns"`
	BandwidthBps  float64        `json:"bandwidth_bytes_per_s"`
	Seed          uint64         `json:"seed"`
	HashMode      string         `json:"hash"`
	StartUnixNano int64          `json:"start_unix_ns"`
	EndUnixNano   int64          `json:"end_unix_ns"`
	Ranks         int            `json:"ranks"`
	Devices       []string       `json:"devices,omitempty"` // each rank's tensor devices (Python recordings)
	Events        int64          `json:"events"`
	PerRank       []rankSummary  `json:"per_rank"`
	Ops           []jsonOp       `json:"ops,omitempty"`
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
		Devices: h.Devices, Comms: h.NamedComms(h.Findings),
	}
	if doc.Command == nil {
		doc.Command = []string{}
	}
	// First pass: the totals, printed before any op.
	var scans []*rankScan
	for rank := 0; rank < r.Ranks(); rank++ {
		if opts.Rank >= 0 && rank != opts.Rank {
			continue
		}
		sc, err := scanRank(r, rank, false)
		if err != nil {
			return err
		}
		scans = append(scans, sc)
		s := rankSummary{Rank: rank, Events: sc.ops + sc.done, Ops: sc.byOp}
		doc.Events += s.Events
		doc.PerRank = append(doc.PerRank, s)
	}
	if opts.JSON {
		if opts.Events {
			return writeShowJSONEvents(f.Out, r, &doc, scans)
		}
		enc := json.NewEncoder(f.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(&doc)
	}
	printSummary(f.Out, &doc)
	if opts.Events {
		for _, sc := range scans {
			if err := printEvents(f.Out, r, sc); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeShowJSONEvents writes doc with its ops streamed from the scanned
// ranks: what json.Encoder with a two-space indent writes of doc with all
// its ops, without holding them.
func writeShowJSONEvents(w io.Writer, r *trace.Reader, doc *showJSON, scans []*rankScan) error {
	var head bytes.Buffer
	enc := json.NewEncoder(&head)
	enc.SetIndent("", "  ")
	doc.Ops = nil // omitted: written below
	if err := enc.Encode(doc); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.Write(bytes.TrimSuffix(head.Bytes(), []byte("\n}\n")))
	bw.WriteString(",\n  \"ops\": [")
	n := 0
	for _, sc := range scans {
		err := eachOp(r, sc, func(op *opRec) error {
			b, err := json.MarshalIndent(toJSONOp(r, *op), "    ", "  ")
			if err != nil {
				return err
			}
			if n > 0 {
				bw.WriteString(",")
			}
			n++
			bw.WriteString("\n    ")
			_, err = bw.Write(b)
			return err
		})
		if err != nil {
			return err
		}
	}
	if n > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}

func hashString(h uint64) string {
	if h == 0 {
		return ""
	}
	return fmt.Sprintf("%016x", h)
}

func toJSONOp(r *trace.Reader, op opRec) jsonOp {
	p := op.Post
	j := jsonOp{Rank: p.Rank, Seq: p.Seq, Op: p.Op.String(), code: p.Op, Bytes: p.Bytes, Req: p.Req, Reqs: p.Reqs,
		PostVT: p.PostVT, Done: op.HasDone, HashPost: hashString(p.HashPost)}
	if p.Op.IsSend() || p.Op.IsRecv() || p.Op == trace.OpProbe || p.Op == trace.OpIprobe {
		peer, tag := p.Peer, p.Tag
		j.Peer, j.Tag = &peer, &tag
	}
	if p.Site != 0 {
		j.Site = siteString(r, p.Site)
	}
	if ro := trace.ReduceOpOf(p.Op, p.Stream); ro != trace.ReduceNone {
		j.ReduceOp = ro.String()
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
		j.Cancelled = d.Flag && (p.Op.IsSend() || p.Op.IsRecv())
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
		rep := verdict.Report{Findings: d.Findings, Comms: d.Comms}
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
	vocab := trace.NamesOf(&trace.Header{Backend: d.Backend})
	for _, n := range names {
		if op := seen[n]; op.Valid() {
			n = vocab.Op(op) // the trace's vocabulary (a torch trace's "all_reduce")
		}
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

// eventsHeader are the columns of show --events.
var eventsHeader = []string{"SEQ", "OP", "PEER", "TAG", "BYTES", "REQ", "POST VT", "DONE VT", "MATCH", "HASH POST", "HASH DONE", "SITE", "ERR"}

// printEvents lists a scanned rank's ops as a table, in two passes over its
// events: the widths of the columns, then the rows (what a tabwriter would
// print, without holding the rank's rows).
func printEvents(w io.Writer, r *trace.Reader, sc *rankScan) error {
	fmt.Fprintf(w, "\nrank %d\n", sc.rank)
	t := newTable(eventsHeader)
	h := r.Header()
	names := trace.NamesOf(&h)
	if err := eachOp(r, sc, func(op *opRec) error { t.measure(eventRow(r, names, op)); return nil }); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	t.write(bw, eventsHeader)
	if err := eachOp(r, sc, func(op *opRec) error { t.write(bw, eventRow(r, names, op)); return nil }); err != nil {
		return err
	}
	return bw.Flush()
}

// eventRow is the row of op in show --events, its op named in the trace's
// vocabulary names.
func eventRow(r *trace.Reader, names *trace.Names, op *opRec) []string {
	j := toJSONOp(r, *op)
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
	} else if j.Cancelled {
		match = "cancelled"
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
	name := j.Op
	if j.code.Valid() {
		name = names.Op(j.code)
	}
	return []string{fmt.Sprint(j.Seq), name, peer, tag, bytes, req, fmt.Sprint(j.PostVT), done, match, dash(j.HashPost), dash(j.HashDone), dash(j.Site), dash(j.Err)}
}

// table aligns rows as text/tabwriter does with minwidth 0, padding 2,
// padding with spaces, cells left-aligned (each cell but the last padded to
// its column's widest plus two), measured first so that it holds no rows.
type table struct{ widths []int }

func newTable(header []string) *table {
	t := &table{widths: make([]int, len(header)-1)}
	t.measure(header)
	return t
}

// measure widens the columns to fit row.
func (t *table) measure(row []string) {
	for i, c := range row[:len(row)-1] {
		t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c)+tablePadding)
	}
}

// write writes row, aligned.
func (t *table) write(w *bufio.Writer, row []string) {
	for i, c := range row[:len(row)-1] {
		w.WriteString(c)
		for n := utf8.RuneCountInString(c); n < t.widths[i]; n++ {
			w.WriteByte(' ')
		}
	}
	w.WriteString(row[len(row)-1])
	w.WriteByte('\n')
}

// tablePadding is the spaces between columns.
const tablePadding = 2
