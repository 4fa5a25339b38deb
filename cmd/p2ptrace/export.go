package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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

var exportFormats = []string{"chrome"}

func newExportCmd(f *factory) *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export --format chrome [-o out.json] <trace>",
		Short: "Convert a trace for a timeline viewer",
		Long: `Export writes a trace in another format. The chrome format is the Chrome
trace-event JSON that Perfetto (ui.perfetto.dev) and chrome://tracing load:
each rank is a thread, each op a slice from its post to its completion in
virtual time (microseconds), and each message a flow arrow from the send to
the receive it matched.`,
		Example: `  p2ptrace export --format chrome -o run.json run.p2ptrace
  p2ptrace export --format chrome run.p2ptrace > run.json`,
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
	if opts.Format != "chrome" {
		return usageErrorf("invalid --format %q: valid formats are %s", opts.Format, strings.Join(exportFormats, ", "))
	}
	if opts.Output != "" && !opts.Force {
		if _, err := os.Stat(opts.Output); err == nil {
			return inputError(fmt.Errorf("%s exists (use --force to replace it)", opts.Output))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return inputError(err)
		}
	}
	r, err := openTrace(opts.Path)
	if err != nil {
		return err
	}
	defer r.Close()
	ops := make([][]opRec, r.Ranks())
	for rank := range ops {
		if ops[rank], err = loadRank(r, rank); err != nil {
			return err
		}
	}
	if opts.Output == "" {
		return writeChrome(f.Out, r, ops)
	}
	out, err := os.Create(opts.Output)
	if err != nil {
		return inputError(err)
	}
	if err := writeChrome(out, r, ops); err != nil {
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

// writeChrome writes the Chrome trace-event JSON of the ops.
func writeChrome(w io.Writer, r *trace.Reader, ops [][]opRec) error {
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
	emit(chromeEvent{Name: "process_name", Ph: "M", Args: map[string]any{"name": "p2ptrace " + strings.Join(h.Command, " ")}})
	// The end of the run, for ops that never completed.
	var end int64
	for _, rank := range ops {
		for _, op := range rank {
			end = max(end, op.Post.PostVT)
			if op.HasDone {
				end = max(end, op.Done.DoneVT)
			}
		}
	}
	for rank := range ops {
		emit(chromeEvent{Name: "thread_name", Ph: "M", Tid: rank, Args: map[string]any{"name": fmt.Sprintf("rank %d", rank)}})
		emit(chromeEvent{Name: "thread_sort_index", Ph: "M", Tid: rank, Args: map[string]any{"sort_index": rank}})
	}
	for rank, rops := range ops {
		for _, op := range rops {
			p := op.Post
			doneVT := end
			args := map[string]any{"seq": p.Seq}
			if p.Op.IsSend() || p.Op.IsRecv() {
				args["peer"], args["tag"], args["bytes"] = p.Peer, p.Tag, p.Bytes
			}
			if p.Site != 0 {
				args["site"] = siteString(r, p.Site)
			}
			if op.HasDone {
				doneVT = op.Done.DoneVT
				if op.Done.MatchRank >= 0 && (p.Op.IsSend() || p.Op.IsRecv()) {
					args["match"] = fmt.Sprintf("%d:%d", op.Done.MatchRank, op.Done.MatchSeq)
				}
				if op.Done.Err != trace.ErrNone {
					args["err"] = op.Done.Err.String()
				}
			} else {
				args["pending"] = true
			}
			dur := us(max(doneVT-p.PostVT, 0))
			emit(chromeEvent{Name: p.Op.String(), Cat: "p2p", Ph: "X", Tid: rank, Ts: us(p.PostVT), Dur: &dur, Args: args})
		}
	}
	// Flows: from each send to the receive it matched.
	id := 0
	for rank, rops := range ops {
		for _, op := range rops {
			if !op.Post.Op.IsSend() || !op.HasDone || op.Done.MatchRank < 0 || int(op.Done.MatchRank) >= len(ops) {
				continue
			}
			recv, ok := findOp(ops[op.Done.MatchRank], op.Done.MatchSeq)
			if !ok {
				continue
			}
			id++
			ts := recv.Post.PostVT
			if recv.HasDone {
				ts = recv.Done.DoneVT
			}
			emit(chromeEvent{Name: "message", Cat: "p2p", Ph: "s", Tid: rank, Ts: us(op.Post.PostVT), ID: id})
			emit(chromeEvent{Name: "message", Cat: "p2p", Ph: "f", Bp: "e", Tid: int(op.Done.MatchRank), Ts: us(ts), ID: id})
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
