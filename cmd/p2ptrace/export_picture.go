package main

import (
	"fmt"
	"io"

	"github.com/p2ptrace/p2ptrace/internal/bugview"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// exportPicture writes the html or dot export: the trace replayed as
// recorded, drawn with its findings.
func exportPicture(f *factory, opts *exportOptions) error {
	tr, err := openReplay(f, opts.Path)
	if err != nil {
		return err
	}
	defer tr.Close()
	cfg := tr.Config()
	fs, err := replay.Run(tr.Open, cfg, tr.Site, nil, cfg.Seed)
	if err != nil {
		return inputError(fmt.Errorf("replaying %s: %w", opts.Path, err))
	}
	if opts.Format == "dot" {
		// The graph is the findings' alone: the trace is read through
		// (its damage is an error, as for html) but no op is kept.
		if err := readThrough(tr); err != nil {
			return inputError(fmt.Errorf("reading %s: %w", opts.Path, err))
		}
		m := &bugview.Model{Title: opts.Path, Findings: bugview.FromReplay(fs)}
		return writeOutput(f, opts.Output, func(w io.Writer) error { return bugview.WriteDOT(w, m) })
	}
	m, err := buildPicture(tr, opts.Path, fs, "the replay as recorded")
	if err != nil {
		return err
	}
	return writeOutput(f, opts.Output, func(w io.Writer) error { return bugview.WriteHTML(w, m) })
}

// readThrough reads every event of the trace, rank by rank as
// bugview.Build does, and returns the first error.
func readThrough(tr *replay.Trace) error {
	src, err := tr.Open()
	if err != nil {
		return err
	}
	var ev trace.Event
	for rank := range src.Ranks() {
		for src.Next(rank, &ev) {
		}
	}
	return src.Err()
}

// buildPicture is the model of the page and the graph: the trace's ops and
// the findings.
func buildPicture(tr *replay.Trace, path string, fs []replay.Finding, source string) (*bugview.Model, error) {
	src, err := tr.Open()
	if err != nil {
		return nil, inputError(err)
	}
	m, err := bugview.Build(path, tr.Header(), src, tr.Site, bugview.FromReplay(fs), source)
	if err != nil {
		return nil, inputError(fmt.Errorf("reading %s: %w", path, err))
	}
	return m, nil
}
