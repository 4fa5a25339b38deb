package mpi

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// TestMergeMissingSegment: rank 1 ended before it created its segment (rank
// 0's MPI error took the job down while rank 1 was in MPI_Init): the merge
// takes it as a rank without calls, the trace is crashed and rank 0's error
// is the verdict, with its call.
func TestMergeMissingSegment(t *testing.T) {
	dir := t.TempDir()
	recs := sampleRecs(1)[:2] // module, Isend
	b := encodeSegment(0, 2, StateErrored, recs)
	binary.LittleEndian.PutUint32(b[108:], callSendInit)
	binary.LittleEndian.PutUint64(b[112:], 0x1234)
	binary.LittleEndian.PutUint32(b[120:], 1)
	copy(b[384:], "MPI_ERR_TAG: invalid tag")
	if err := os.WriteFile(SegmentPath(dir, 0), b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Merge(dir, filepath.Join(dir, "t.p2ptrace"), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Status != "crashed" || res.Header.WorldSize != 2 {
		t.Errorf("header %+v", res.Header)
	}
	if r := res.Ranks[1]; r.State != StateRunning || !strings.Contains(r.Error, "no segment: it ended before creating one") {
		t.Errorf("rank 1 %+v", r)
	}
	if got := findingTexts(res.Header.Findings); len(got) != 1 || !strings.HasPrefix(got[0], "invalid-call [0]: rank 0: MPI error in MPI_Send_init") || !strings.Contains(got[0], "MPI_ERR_TAG") {
		t.Errorf("findings %q", got)
	}
	if msg := res.Header.Message; msg != "rank 1 has no segment: it ended before creating one (taken down inside MPI_Init), or its rank-1.seg was not gathered" {
		t.Errorf("message %q", msg)
	}
	_, rk, _ := loadTrace(t, filepath.Join(dir, "t.p2ptrace"))
	if len(rk) != 2 || len(rk[1]) != 0 || len(rk[0]) == 0 {
		t.Errorf("ranks %d, calls of rank 1 %v", len(rk), rk)
	}
}

// TestMergeRules: what the merge finds from what only the shim saw: an
// Irecv's buffer overlapping a later Send's while pending (and not once
// the Irecv completed), a Sendrecv's two buffers overlapping, and a
// persistent request never freed (and not one freed).
func TestMergeRules(t *testing.T) {
	dir := t.TempDir()
	mod := record{Type: recModule, Module: 1, PC: 0x1000, Path: "/nonexistent/a.out"}
	post := func(seq uint32, call uint8, op uint8, pc, addr uint64, span int64, req uint64, reqs ...uint64) record {
		return record{Type: recPost, Call: call, Op: op, Seq: seq, Module: 1, PC: pc, Peer: 1, Tag: 5, Dtype: 2, Count: span / 4,
			Bytes: span, T0: uint64(seq+1) * 10, Req: req, Reqs: reqs, Addr: addr, Span: span}
	}
	done := func(seq uint32, call uint8, req uint64) record {
		return record{Type: recDone, Call: call, Seq: seq, T1: uint64(seq+1)*10 + 5, Req: req, Source: 1, StatTag: 5}
	}
	recs := []record{mod,
		post(0, callIrecv, 10, 0x1100, 0x7000, 64, 1), // Irecv [0x7000, 0x7040)
		post(1, callSend, 1, 0x1200, 0x7020, 64, 0),   // Send overlapping it by 32 bytes: a finding
		done(1, callSend, 0),                          //
		post(2, callWait, 11, 0x1300, 0, 0, 0, 1),     // Wait for the Irecv
		done(0, callWait, 1), done(2, callWait, 0),    //
		post(3, callSend, 1, 0x1400, 0x7000, 64, 0),        // after completion: fine
		done(3, callSend, 0),                               //
		post(4, callSendrecv, 17, 0x1500, 0x8000, 16, 0),   // Sendrecv send part
		post(5, callSendrecv, 5, 0x1500, 0x8008, 16, 0),    // its recv part, overlapping by 8
		done(4, callSendrecv, 0), done(5, callSendrecv, 0), //
		post(6, callSendInit, 6, 0x1600, 0x9000, 16, 100),  // never freed
		post(7, callRecvInit, 10, 0x1700, 0xa000, 16, 101), // freed below
		post(8, callRequestFree, 0, 0x1800, 0, 0, 101),     //
		post(9, callFinalize, 24, 0x1900, 0, 0, 0), done(9, callFinalize, 0),
	}
	for i := range recs {
		if recs[i].Call == callFinalize || recs[i].Call == callWait || recs[i].Call == callRequestFree {
			recs[i].Peer, recs[i].Tag, recs[i].Dtype, recs[i].Count, recs[i].Bytes = 0, 0, 0, 0, 0
		}
	}
	os.WriteFile(SegmentPath(dir, 0), encodeSegment(0, 2, StateFinalized, recs), 0o644)
	os.WriteFile(SegmentPath(dir, 1), encodeSegment(1, 2, StateFinalized, nil), 0o644)
	res, err := Merge(dir, filepath.Join(dir, "t.p2ptrace"), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := findingTexts(res.Header.Findings)
	want := []string{
		"buffer-overlap [0]: rank 0: MPI_Irecv at a.out+0x100 (receives into it, pending) and MPI_Send at a.out+0x200 (sends from it) use overlapping buffers (32 bytes in common) @ a.out+0x100 a.out+0x200",
		"buffer-overlap [0]: rank 0: MPI_Sendrecv at a.out+0x500 (sends from it, pending) and MPI_Sendrecv at a.out+0x500 (receives into it) use overlapping buffers (8 bytes in common) @ a.out+0x500 a.out+0x500",
		"request-leak [0]: rank 0: persistent request of MPI_Send_init at a.out+0x600 (peer 1, tag 5) never freed before MPI_Finalize @ a.out+0x600",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Header.Status != "complete" {
		t.Errorf("status %s", res.Header.Status)
	}
}

// TestMergeErrorOutsideRecordedCalls: an MPI error raised by a call the
// shim does not record (MPI_Bcast...) is not pinned on the last recorded
// call: the finding says so, and names that call as "after".
func TestMergeErrorOutsideRecordedCalls(t *testing.T) {
	dir := t.TempDir()
	b := encodeSegment(0, 1, StateErrored, sampleRecs(0)[:2])
	le := binary.LittleEndian
	le.PutUint32(b[84:], callIsend)
	le.PutUint64(b[88:], 0x1234)
	le.PutUint32(b[96:], 1)
	copy(b[384:], "MPI_ERR_ROOT: invalid root")
	if err := os.WriteFile(SegmentPath(dir, 0), b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Merge(dir, filepath.Join(dir, "t.p2ptrace"), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "invalid-call [0]: rank 0: MPI error in an MPI call p2ptrace does not record (after MPI_Isend at a.out+0x234): MPI_ERR_ROOT: invalid root"
	if got := findingTexts(res.Header.Findings); len(got) != 1 || got[0] != want {
		t.Errorf("findings %q\nwant     %q", got, want)
	}
}

// TestMergeErrorNamedFromStack: the shim found the failed call's return
// address (and name) on the stack: the finding names both.
func TestMergeErrorNamedFromStack(t *testing.T) {
	dir := t.TempDir()
	b := encodeSegment(0, 1, StateErrored, sampleRecs(0)[:2])
	le := binary.LittleEndian
	le.PutUint32(b[84:], callIsend)
	le.PutUint64(b[112:], 0x1300)
	le.PutUint32(b[120:], 1)
	copy(b[384:], "MPI_ERR_ROOT: invalid root")
	copy(b[896:], "MPI_Bcast")
	if err := os.WriteFile(SegmentPath(dir, 0), b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Merge(dir, filepath.Join(dir, "t.p2ptrace"), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "invalid-call [0]: rank 0: MPI error in MPI_Bcast: MPI_ERR_ROOT: invalid root @ a.out+0x300"
	if got := findingTexts(res.Header.Findings); len(got) != 1 || got[0] != want {
		t.Errorf("findings %q\nwant     %q", got, want)
	}
}

// findingTexts renders findings as "KIND [RANKS]: MESSAGE @ SITES".
func findingTexts(fs []verdict.Finding) []string {
	var out []string
	for _, f := range fs {
		line := fmt.Sprintf("%s %v: %s", f.Kind, f.Ranks, f.Message)
		var sites []string
		for _, o := range f.Ops {
			if o.Site != "" {
				sites = append(sites, o.Site)
			}
		}
		if len(sites) > 0 {
			line += " @ " + strings.Join(sites, " ")
		}
		out = append(out, line)
	}
	return out
}

// TestSignatureDiff: mixed type signatures are compared element by element
// over the shorter message, whatever the datatypes' grouping: {int, double}
// x 4 against contiguous(4, {int, double}) x 1 agree, against {double, int}
// x 4 they differ at element 0, and a receive of more elements than sent
// agrees on the prefix.
func TestSignatureDiff(t *testing.T) {
	id := []sigRun{{trace.Int32, 1}, {trace.Float64, 1}}
	di := []sigRun{{trace.Float64, 1}, {trace.Int32, 1}}
	id4 := slices.Concat(id, id, id, id)
	idd := []sigRun{{trace.Int32, 1}, {trace.Float64, 2}}
	for _, c := range []struct {
		name   string
		a      []sigRun
		na     int64
		b      []sigRun
		nb     int64
		ok     bool
		at     int64
		sent   trace.Dtype
		wanted trace.Dtype
	}{
		{"same", id, 4, id, 4, true, 0, 0, 0},
		{"grouped", id, 4, id4, 1, true, 0, 0, 0},
		{"longer receive", id, 2, id, 8, true, 0, 0, 0},
		{"swapped", id, 4, di, 4, false, 0, trace.Int32, trace.Float64},
		{"later", id, 2, idd, 1, false, 2, trace.Int32, trace.Float64},
	} {
		at, x, y, ok := sigDiff(c.a, c.na, c.b, c.nb)
		if ok != c.ok || at != c.at || x != c.sent || y != c.wanted {
			t.Errorf("%s: sigDiff = %d, %s, %s, %v; want %d, %s, %s, %v", c.name, at, x, y, ok, c.at, c.sent, c.wanted, c.ok)
		}
	}
}

// TestMergeFindingsNameTraceOps: a merge finding names its calls by their
// Seq in the trace (what show prints and replay's findings use), not by
// the shim's call number: a gap between calls becomes a Compute op and a
// wait on null requests only is left out, so the two numberings differ.
func TestMergeFindingsNameTraceOps(t *testing.T) {
	dir := t.TempDir()
	mod := record{Type: recModule, Module: 1, PC: 0x1000, Path: "/nonexistent/a.out"}
	post := func(seq uint32, call uint8, op uint8, pc uint64, t0 uint64, addr uint64, span int64, req uint64, reqs ...uint64) record {
		return record{Type: recPost, Call: call, Op: op, Seq: seq, Module: 1, PC: pc, Peer: 1, Tag: 5, Dtype: 2, Count: span / 4,
			Bytes: span, T0: t0, Req: req, Reqs: reqs, Addr: addr, Span: span}
	}
	done := func(seq uint32, call uint8, t1 uint64, req uint64) record {
		return record{Type: recDone, Call: call, Seq: seq, T1: t1, Req: req, Source: 1, StatTag: 5}
	}
	procNull := post(2, callSend, 1, 0x1300, 50_010, 0x6000, 16, 0)
	procNull.Peer = trace.ProcNull
	overlapping := post(3, callSend, 1, 0x1400, 50_020, 0x7020, 64, 0)
	overlapping.Tag = 6
	recs := []record{mod,
		post(0, callSend, 1, 0x1100, 10, 0x9000, 64, 0), done(0, callSend, 15, 0), // trace op 0
		post(1, callIrecv, 10, 0x1200, 50_000, 0x7000, 64, 1), // after a 50 us gap: Compute is op 1, the Irecv op 2
		procNull, done(2, callSend, 50_015, 0), // to MPI_PROC_NULL: not in the trace
		overlapping, done(3, callSend, 50_025, 0), // op 3: overlaps the pending Irecv
		post(4, callWait, 11, 0x1500, 50_030, 0, 0, 0, 1),
		done(1, callWait, 50_040, 1), done(4, callWait, 50_040, 0),
		post(5, callFinalize, 24, 0x1600, 50_050, 0, 0, 0), done(5, callFinalize, 50_060, 0),
	}
	for i := range recs {
		if c := recs[i].Call; c == callFinalize || c == callWait {
			recs[i].Peer, recs[i].Tag, recs[i].Dtype, recs[i].Count, recs[i].Bytes = 0, 0, 0, 0, 0
		}
	}
	os.WriteFile(SegmentPath(dir, 0), encodeSegment(0, 2, StateFinalized, recs), 0o644)
	os.WriteFile(SegmentPath(dir, 1), encodeSegment(1, 2, StateFinalized, nil), 0o644)
	path := filepath.Join(dir, "t.p2ptrace")
	res, err := Merge(dir, path, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Header.Findings) != 1 || res.Header.Findings[0].Kind != verdict.BufferOverlap {
		t.Fatalf("findings %q, want one buffer-overlap", findingTexts(res.Header.Findings))
	}
	_, rk, _ := loadTrace(t, path)
	bySeq := map[uint64]trace.Event{}
	for _, o := range rk[0] {
		bySeq[o.post.Seq] = o.post
	}
	var got []string
	for _, o := range res.Header.Findings[0].Ops {
		e := bySeq[o.Seq]
		got = append(got, fmt.Sprintf("op %d %s tag %d is %s tag %d in the trace", o.Seq, o.Op, o.Tag, e.Op, e.Tag))
	}
	want := []string{"op 2 MPI_Irecv tag 5 is Irecv tag 5 in the trace", "op 3 MPI_Send tag 6 is Send tag 6 in the trace"}
	if !slices.Equal(got, want) {
		t.Errorf("finding's ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMergeErrorAfterTheJobWasEnded: a rank that failed after p2ptrace began
// to end the job (MergeOptions.EndedAt) failed because it was being ended:
// it counts as killed in the call it was blocked in, not as a finding of its
// own; the same rank failing before that is the invalid call it was.
func TestMergeErrorAfterTheJobWasEnded(t *testing.T) {
	const failedAt = 1_700_000_005_000_000_000
	for _, c := range []struct {
		endedAt int64
		killed  bool
	}{{failedAt - 1, true}, {failedAt, true}, {failedAt + 1, false}} {
		dir := t.TempDir()
		b := encodeSegment(0, 1, StateErrored, sampleRecs(0)[:2])
		le := binary.LittleEndian
		le.PutUint64(b[64:], failedAt)
		le.PutUint32(b[84:], callIsend)
		le.PutUint64(b[88:], 0x1234)
		le.PutUint32(b[96:], 1)
		copy(b[384:], "MPI_ERR_OTHER: connection closed")
		if err := os.WriteFile(SegmentPath(dir, 0), b, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Merge(dir, filepath.Join(dir, "t.p2ptrace"), MergeOptions{EndedAt: c.endedAt, Status: trace.StatusHung})
		if err != nil {
			t.Fatal(err)
		}
		got := findingTexts(res.Header.Findings)
		if c.killed {
			if re := res.Ranks[0]; re.State != StateBlocked || re.Blocked != "MPI_Isend" || len(got) != 0 {
				t.Errorf("ended at %d: rank %+v, findings %q; want killed in MPI_Isend, no finding", c.endedAt, re, got)
			}
		} else if len(got) != 1 || !strings.Contains(got[0], "MPI_ERR_OTHER") {
			t.Errorf("ended at %d (after the failure): findings %q; want the failure", c.endedAt, got)
		}
	}
}

// TestResourceLeakRule pins which objects are leaks: communicators made by
// a program's call, windows, datatypes, groups and reduction ops, not freed
// (a free record names the id and, by its call, the kind); not the world
// or a communicator no call of the program made; one finding per site
// across ranks, with the counts.
func TestResourceLeakRule(t *testing.T) {
	comm := func(id int32, call uint8, pc uint64) record {
		return record{Type: recComm, Comm: id, Call: call, PC: pc}
	}
	free := func(id int32, call uint8) record { return record{Type: recFree, Comm: id, Call: call, PC: 0x99} }
	rank0 := &rankData{seg: &segment{recs: []record{
		comm(0, callNone, 0),                                   // the world
		comm(7, callNone, 0),                                   // made by a call the shim does not intercept
		comm(8, callTorchNewGroup, 0x80),                       // a torch.distributed process group, not an MPI object
		comm(1, callCommDup, 0x10),                             // freed below
		comm(2, callCommDup, 0x10),                             // leaked
		comm(3, callCommDup, 0x10),                             // leaked
		comm(4, callCommSplit, 0x20),                           // leaked
		{Type: recRMA, Call: callWinCreate, Comm: 4, PC: 0x30}, // (a window's id may equal a communicator's)
		free(1, callCommFree),
		free(4, callWinFree), // frees window 4, not communicator 4
	}}}
	rank1 := &rankData{seg: &segment{recs: []record{
		comm(2, callCommDup, 0x10), // leaked: one where rank 0 leaked two
		comm(4, callCommSplit, 0x20),
		free(4, callCommFree),
		{Type: recObj, Call: callTypeVector, Comm: 1, Tag: 1, PC: 0x40},     // a datatype, leaked
		{Type: recObj, Call: callCommGroup, Comm: 2, Tag: 2, PC: 0x50},      // a group, freed
		{Type: recObj, Call: callOpCreate, Comm: 3, Tag: 3, PC: 0x60},       // a reduction op, leaked
		{Type: recObj, Call: callTypeContiguous, Comm: 4, Tag: 1, PC: 0x70}, // freed
		free(2, callGroupFree),
		free(4, callTypeFree),
		free(1, callGroupFree), // names no group made: frees nothing (the datatype 1 stays leaked)
	}}}
	site := pcSites("o.c")
	leaks := append(resourceLeaks(0, rank0, site), resourceLeaks(1, rank1, site)...)
	fs := resourceLeakFindings(leaks)
	var got []string
	for _, f := range fs {
		if f.Kind != verdict.ResourceLeak {
			t.Errorf("kind %s", f.Kind)
		}
		got = append(got, fmt.Sprint(f.Ranks, " ", f.Message))
	}
	const tail = " before MPI_Finalize, which does not free objects made by MPI calls (MPI-3.1 sec. 8.7)"
	want := []string{
		"[0 1] ranks 0, 1 never freed 3 communicators in all made by MPI_Comm_dup at o.c:10 (MPI_Comm_free)" + tail,
		"[0] rank 0 never freed a communicator made by MPI_Comm_split at o.c:20 (MPI_Comm_free)" + tail,
		"[1] rank 1 never freed a datatype made by MPI_Type_vector at o.c:40 (MPI_Type_free)" + tail,
		"[1] rank 1 never freed a reduction op made by MPI_Op_create at o.c:60 (MPI_Op_free)" + tail,
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSameErrorsFoldAcrossRanks: ranks that fail the same way in the same
// call at the same line are one finding naming them all (exits without
// MPI_Finalize too); another error, or the same at another line, stays its
// own.
func TestSameErrorsFoldAcrossRanks(t *testing.T) {
	end := func(r int, site, err string) RankEnd {
		return RankEnd{Rank: r, State: StateErrored, Site: site, Error: err}
	}
	errs := []verdict.Finding{
		errorFinding(end(0, "a.c:19", "MPI_ERR_COMM: invalid communicator"), "MPI_Allgather"),
		errorFinding(end(1, "a.c:19", "MPI_ERR_TYPE: invalid datatype"), "MPI_Allgather"),
		errorFinding(end(2, "a.c:19", "MPI_ERR_COMM: invalid communicator"), "MPI_Allgather"),
		errorFinding(end(3, "a.c:21", "MPI_ERR_COMM: invalid communicator"), "MPI_Allgather"),
	}
	// Two ranks that returned from main without a call since MPI_Init (no
	// op to name): one finding, not two of one signature.
	noSite := func(*rankData, uint32, uint64, uint32) string { return "" }
	for _, r := range []int{4, 5} {
		errs = append(errs, exitFinding(RankEnd{Rank: r, State: StateExited}, nil, segHeader{CurCall: callNone}, noSite))
	}
	var got []string
	for _, f := range sameErrors(errs) {
		got = append(got, fmt.Sprintf("%s %v %s (%d ops)", f.Kind, f.Ranks, f.Message, len(f.Ops)))
	}
	want := []string{
		"invalid-call [0 2] ranks 0, 2: MPI error in MPI_Allgather: MPI_ERR_COMM: invalid communicator (2 ops)",
		"invalid-call [1] rank 1: MPI error in MPI_Allgather: MPI_ERR_TYPE: invalid datatype (1 ops)",
		"invalid-call [3] rank 3: MPI error in MPI_Allgather: MPI_ERR_COMM: invalid communicator (1 ops)",
		"invalid-call [4 5] ranks 4, 5 exited with status 0 without calling MPI_Finalize (MPI-3.1 sec. 8.7: every process calls it before it exits) (0 ops)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
