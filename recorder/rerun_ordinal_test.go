package recorder

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// writeRank0 writes a one-rank trace whose rank 0 makes the given ops:
// each a post and a done, a receive done matched from its from.
func writeRank0(t *testing.T, ops []trace.Event) *trace.Reader {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	w, err := trace.Create(path, trace.Header{WorldSize: 3}, trace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, op := range ops {
		post := op
		post.Kind, post.Seq, post.MatchRank = trace.KindPost, uint64(i), 0
		w.Append(&post)
		done := op
		done.Kind, done.Seq = trace.KindDone, uint64(i)
		w.Append(&done)
	}
	if err := w.Close(trace.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestMPIRerunFindsForcedReceiveByOrdinal: an MPI re-run's trace numbers
// its ops anew (the merge turns gaps between calls into Compute ops, and
// the gaps depend on timing), so the forced receive is found in it as the
// shim pinned it, by its ordinal among the rank's MPI_ANY_SOURCE receives,
// not by the recorded op number (which made check call a correct
// master/worker re-run "the forced match did not happen" now and then).
func TestMPIRerunFindsForcedReceiveByOrdinal(t *testing.T) {
	any := func(from int32) trace.Event {
		return trace.Event{Op: trace.OpRecv, Peer: trace.AnySource, MatchRank: from}
	}
	compute := trace.Event{Op: trace.OpCompute, Duration: 5000}
	recorded := writeRank0(t, []trace.Event{{Op: trace.OpSend, Peer: 1}, any(1), any(2)})
	rerun := writeRank0(t, []trace.Event{{Op: trace.OpSend, Peer: 1}, compute, any(2), compute, any(1)})

	n, ok := anySourceOrdinal(recorded, 0, 1) // the recorded first receive from any source
	if !ok || n != 0 {
		t.Fatalf("ordinal of op 1: %d, %v; want 0", n, ok)
	}
	seq, ok := nthAnySource(rerun, 0, n)
	if !ok || seq != 2 {
		t.Fatalf("re-run's receive number %d: op %d, %v; want op 2", n, seq, ok)
	}
	if !matchedFrom(rerun, 0, seq, 2) {
		t.Error("the re-run's first AnySource receive matched rank 2, as forced: not seen")
	}
	if matchedFrom(rerun, 0, 1, 2) {
		t.Error("op 1 of the re-run (a Compute) taken for the forced receive")
	}
	if _, ok := nthAnySource(rerun, 0, 2); ok {
		t.Error("a third AnySource receive found in a re-run that has two")
	}
}

// TestMPIRerunOrdinalCountsProbesThatFound: the shim counts, among a rank's
// calls from MPI_ANY_SOURCE, every MPI_Probe and each MPI_Iprobe that found
// a message (an Iprobe that answered no does not count: how often a program
// polls depends on timing), in call order with the receives; a pinned
// probe's re-run is judged by the source its status gave.
func TestMPIRerunOrdinalCountsProbesThatFound(t *testing.T) {
	recv := trace.Event{Op: trace.OpRecv, Peer: trace.AnySource, MatchRank: 1}
	probe := trace.Event{Op: trace.OpProbe, Peer: trace.AnySource, Source: 2, MatchRank: trace.NoRank}
	polled := trace.Event{Op: trace.OpIprobe, Peer: trace.AnySource, Source: trace.NoRank, MatchRank: trace.NoRank}
	found := polled
	found.Flag, found.Source = true, 1
	named := trace.Event{Op: trace.OpProbe, Peer: 1, Source: 1, MatchRank: trace.NoRank}
	r := writeRank0(t, []trace.Event{polled, found, named, polled, probe, recv, polled})
	var got []uint64
	for n := 0; ; n++ {
		seq, ok := nthAnySource(r, 0, n)
		if !ok {
			break
		}
		got = append(got, seq)
		if m, ok := anySourceOrdinal(r, 0, seq); !ok || m != n {
			t.Errorf("ordinal of op %d: %d, %v; want %d", seq, m, ok, n)
		}
	}
	if want := []uint64{1, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("counted ops %v, want %v (the Iprobe that found, the Probe, the Recv)", got, want)
	}
	if _, ok := anySourceOrdinal(r, 0, 0); ok {
		t.Error("an Iprobe that answered no counted")
	}
	if !matchedFrom(r, 0, 4, 2) || matchedFrom(r, 0, 4, 1) || !matchedFrom(r, 0, 1, 1) || matchedFrom(r, 0, 0, 0) {
		t.Error("a probe's match is the source its status gave")
	}
}
