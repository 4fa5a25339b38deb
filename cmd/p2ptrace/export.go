package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

type exportOptions struct {
	Format string
	Output string
	Force  bool
	Path   string
}

var exportFormats = []string{"chrome", "html", "dot"}

func newExportCmd(f *factory) *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export --format chrome|html|dot [-o FILE] <trace>",
		Short: "Convert a trace for a timeline viewer, a web page or Graphviz",
		Long: `Export writes a trace in another format.

chrome: the Chrome trace-event JSON that Perfetto (ui.perfetto.dev) and
chrome://tracing load: each rank is a thread, each op a slice from its post
to its completion in virtual time (microseconds), and each message a flow
arrow from the send to the receive it matched.

html: one self-contained page (no network needed): a timeline per rank of
the ops in virtual time, the findings of the trace replayed as recorded
(select one to highlight its ranks and ops), the wait-for graph of a
deadlock or hang with the blocked calls' file:line, and an op's envelope,
bytes and site on hover. Big traces are drawn as per-rank densities until
zoomed in (mouse wheel, drag, or a finding). For the findings under faults,
use 'p2ptrace check --html'.

dot: the wait-for graph of each deadlock or hang (replayed as recorded) for
Graphviz: blocked calls with file:line, the cycle in red, the nearest
unmatched candidates as notes. Render it with 'dot -Tsvg'.

Exit status: 0 written (whatever the findings), 2 usage or input error.`,
		Example: `  p2ptrace export --format chrome -o run.json run.p2ptrace
  p2ptrace export --format chrome run.p2ptrace > run.json
  p2ptrace export --format html -o report.html run.p2ptrace
  p2ptrace export --format dot run.p2ptrace | dot -Tsvg > waitfor.svg`,
		Args: exactArgs(1, "one trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			return runExport(f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "chrome", "output format: "+strings.Join(exportFormats, ", "))
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write to this file (default: standard output)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing output file")
	return cmd
}

func runExport(f *factory, opts *exportOptions) error {
	if !slices.Contains(exportFormats, opts.Format) {
		return usageErrorf("invalid --format %q: valid formats are %s", opts.Format, strings.Join(exportFormats, ", "))
	}
	if err := checkOutput(opts.Output, opts.Force); err != nil {
		return err
	}
	if opts.Format != "chrome" {
		return exportPicture(f, opts)
	}
	r, err := openTrace(opts.Path)
	if err != nil {
		return err
	}
	defer r.Close()
	// First pass: where the run ends and where each op ends, for the
	// arrows; the ops are streamed from the file as they are written.
	scans := make([]*rankScan, r.Ranks())
	for rank := range scans {
		if scans[rank], err = scanRank(r, rank, true); err != nil {
			return err
		}
	}
	return writeOutput(f, opts.Output, func(w io.Writer) error { return writeChrome(w, r, scans) })
}

// checkOutput refuses to replace an existing output file without force.
func checkOutput(path string, force bool) error {
	if path == "" || force {
		return nil
	}
	if _, err := os.Stat(path); err == nil {
		return inputError(fmt.Errorf("%s exists (use --force to replace it)", path))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return inputError(err)
	}
	return nil
}

// writeOutput runs write on the file at path, or on standard output for "".
func writeOutput(f *factory, path string, write func(io.Writer) error) error {
	if path == "" {
		return write(f.Out)
	}
	out, err := os.Create(path)
	if err != nil {
		return inputError(err)
	}
	if err := write(out); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return inputError(err)
	}
	return nil
}

type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	ID   int            `json:"id,omitempty"`
	Bp   string         `json:"bp,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

func us(vt int64) float64 { return float64(vt) / 1000 }

// writeChrome writes the Chrome trace-event JSON of the scanned ranks' ops.
func writeChrome(w io.Writer, r *trace.Reader, scans []*rankScan) error {
	bw := bufio.NewWriter(w)
	first := true
	var werr error
	emit := func(ev chromeEvent) {
		b, err := json.Marshal(ev)
		if err != nil && werr == nil {
			werr = err
		}
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		bw.Write(b)
	}
	bw.WriteString("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")
	h := r.Header()
	names := trace.NamesOf(&h) // slices named in the trace's vocabulary (a torch trace's "all_reduce")
	emit(chromeEvent{Name: "process_name", Ph: "M", Args: map[string]any{"name": "p2ptrace " + strings.Join(h.Command, " ")}})
	// The end of the run, for ops that never completed.
	var end int64
	for _, sc := range scans {
		end = max(end, sc.end)
	}
	for rank := range scans {
		emit(chromeEvent{Name: "thread_name", Ph: "M", Tid: rank, Args: map[string]any{"name": fmt.Sprintf("rank %d", rank)}})
		emit(chromeEvent{Name: "thread_sort_index", Ph: "M", Tid: rank, Args: map[string]any{"sort_index": rank}})
	}
	for rank, sc := range scans {
		err := eachOp(r, sc, func(op *opRec) error {
			p := op.Post
			doneVT := end
			args := map[string]any{"seq": p.Seq}
			if p.Op.IsSend() || p.Op.IsRecv() {
				args["peer"], args["tag"], args["bytes"] = p.Peer, p.Tag, p.Bytes
			}
			if p.Site != 0 {
				args["site"] = siteString(r, p.Site)
			}
			if ro := trace.ReduceOpOf(p.Op, p.Stream); ro != trace.ReduceNone {
				args["reduce_op"] = ro.String()
			}
			if op.HasDone {
				doneVT = op.Done.DoneVT
				if op.Done.MatchRank >= 0 && (p.Op.IsSend() || p.Op.IsRecv()) {
					args["match"] = fmt.Sprintf("%d:%d", op.Done.MatchRank, op.Done.MatchSeq)
				}
				if op.Done.Err != trace.ErrNone {
					args["err"] = op.Done.Err.String()
				}
				if op.Done.Flag && (p.Op.IsSend() || p.Op.IsRecv()) {
					args["cancelled"] = true // MPI_Cancel took: it matched nothing
				}
			} else {
				args["pending"] = true
			}
			dur := us(max(doneVT-p.PostVT, 0))
			emit(chromeEvent{Name: names.Op(p.Op), Cat: "p2p", Ph: "X", Tid: rank, Ts: us(p.PostVT), Dur: &dur, Args: args})
			return nil
		})
		if err != nil {
			return err
		}
	}
	// Flows: from each send to the receive it matched.
	id := 0
	for rank, sc := range scans {
		err := eachOp(r, sc, func(op *opRec) error {
			if !op.Post.Op.IsSend() || !op.HasDone || op.Done.MatchRank < 0 || int(op.Done.MatchRank) >= len(scans) {
				return nil
			}
			ts, ok := scans[op.Done.MatchRank].endOf(op.Done.MatchSeq)
			if !ok {
				return nil
			}
			id++
			emit(chromeEvent{Name: "message", Cat: "p2p", Ph: "s", Tid: rank, Ts: us(op.Post.PostVT), ID: id})
			emit(chromeEvent{Name: "message", Cat: "p2p", Ph: "f", Bp: "e", Tid: int(op.Done.MatchRank), Ts: us(ts), ID: id})
			return nil
		})
		if err != nil {
			return err
		}
	}
	bw.WriteString("\n]}\n")
	if werr == nil {
		werr = bw.Flush()
	}
	return werr
}

// findOp finds the op of sequence number seq (ops are in seq order, usually
// seq == index).
func findOp(ops []opRec, seq uint64) (opRec, bool) {
	if seq < uint64(len(ops)) && ops[seq].Post.Seq == seq {
		return ops[seq], true
	}
	for _, op := range ops {
		if op.Post.Seq == seq {
			return op, true
		}
	}
	return opRec{}, false
}
