// Package bugview draws a trace and its findings for people: a
// self-contained HTML page (a timeline per rank, the findings, the wait-for
// graph of a hang) and the wait-for graph as Graphviz DOT.
//
// Build turns a trace and replay findings into a Model, the one input of
// both renderers; FromReplay is the one place that reads replay.Finding.
//
// The page stays usable at thousands of ranks and millions of events: it
// embeds every op in columns (one array per field and rank) and draws, for
// the visible time window, each op when at most MaxDrawnOps are visible and
// else a per-rank density (ops per time bin, in shades); zooming in (wheel,
// drag, or selecting a finding) narrows the window until single ops show.
package bugview
