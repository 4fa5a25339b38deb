// Package verdict is the one vocabulary of p2ptrace's findings: the kinds of
// bug it reports, the Finding that names one, and the renderers that print a
// report as text for people and as JSON for tools.
//
// Every door makes its findings here: a live run (gpu.Launch, p2ptrace
// record), a replay or check of a trace (package replay), a merged MPI job
// (package recorder) and the harness inside go test. A door may see fewer
// bugs than another (a live run takes one schedule; only a replay can inject
// faults), but the same bug always gets the same kind, ranks, ops and
// wording, whichever door it came in by.
//
// Findings made while recording are stored in the trace header as these
// structured records (Header.Findings, versioned by Version), never as prose
// to be parsed back.
//
// The package is a leaf: it imports nothing of p2ptrace, so that the engine
// (gpu/sim), the trace format (recorder/trace) and every door can use it
// without an import cycle. That is why it sits at the top of the module and
// not inside one of the packages that use it.
package verdict
