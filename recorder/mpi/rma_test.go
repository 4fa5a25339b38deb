package mpi

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// TestErrorFindingRMASync: an MPI_ERR_RMA_SYNC in a marked RMA call is an
// invalid call at its line that says the rule of MPI-3.1 sec. 11.5; other
// errors do not get that rule.
func TestErrorFindingRMASync(t *testing.T) {
	re := RankEnd{Rank: 1, State: StateErrored, Error: "MPI_ERR_RMA_SYNC: error executing rma sync", Site: "rma-sync.c:54"}
	f := errorFinding(re, "MPI_Put")
	if f.Kind != verdict.InvalidCall || len(f.Ops) != 1 || f.Ops[0].Call != "MPI_Put" || f.Ops[0].Site != "rma-sync.c:54" {
		t.Fatalf("finding %+v, want an invalid call of MPI_Put at rma-sync.c:54", f)
	}
	for _, want := range []string{"rank 1: MPI error in MPI_Put: MPI_ERR_RMA_SYNC", "sec. 11.5", "access epoch"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q does not say %q", f.Message, want)
		}
	}
	re.Error = "MPI_ERR_RANK: invalid rank"
	if f := errorFinding(re, "MPI_Put"); strings.Contains(f.Message, "11.5") {
		t.Errorf("an MPI_ERR_RANK says the RMA rule: %q", f.Message)
	}
}

// TestOneSidedCallClasses: which marked calls are collective (the
// collectives' hint) and which wait for other ranks' one-sided
// synchronization (the one-sided hint).
func TestOneSidedCallClasses(t *testing.T) {
	for _, tc := range []struct {
		call       string
		collective bool
		rmaSync    bool
	}{
		{"MPI_Win_create", true, false},
		{"MPI_Win_allocate_shared", true, false},
		{"MPI_Win_create_dynamic", true, false},
		{"MPI_Win_fence", true, false},
		{"MPI_Win_free", true, false},
		{"MPI_Put", false, false},
		{"MPI_Rget_accumulate", false, false},
		{"MPI_Win_lock", false, true},
		{"MPI_Win_unlock_all", false, true},
		{"MPI_Win_flush_local_all", false, true},
		{"MPI_Win_sync", false, false},
		{"MPI_Win_post", false, false},
		{"MPI_Win_start", false, true},
		{"MPI_Win_complete", false, true},
		{"MPI_Win_wait", false, true},
		{"MPI_Request_get_status", false, false},
		{"MPI_Recv", false, false},
	} {
		if got := CollectiveCall(tc.call); got != tc.collective {
			t.Errorf("CollectiveCall(%s) = %v, want %v", tc.call, got, tc.collective)
		}
		if got := RMASyncCall(tc.call); got != tc.rmaSync {
			t.Errorf("RMASyncCall(%s) = %v, want %v", tc.call, got, tc.rmaSync)
		}
	}
}

// TestRMAConflictRule pins rmaFindings on synthetic records of three ranks
// and one window, rank 0's, of disp_unit 4 (the origins' own windows have
// disp_unit 1: displacements are the target's units). One finding per
// conflicting epoch, none for what MPI-3.1 sec. 11.7 allows.
func TestRMAConflictRule(t *testing.T) {
	const win = 77
	made := func(unit int64) record {
		return record{Type: recRMA, Call: callWinCreate, Comm: win, Count: unit, Bytes: 64, PC: 0x10}
	}
	// acc is an access of rank origin's to rank 0: disp in rank 0's units,
	// bytes long, in fence epoch epoch.
	acc := func(call uint8, disp, bytes int64, epoch int32, op trace.ReduceOp, pc uint64) record {
		return record{Type: recRMA, Call: call, Comm: win, Peer: 0, Count: disp, Bytes: bytes, Index: epoch,
			Tag: int32(op), Dtype: uint8(trace.Int32), PC: pc}
	}
	lockEpoch := func(r record) record { r.Flag = true; return r }
	holes := func(r record) record { r.Err = 1; return r }
	ranks := []*rankData{
		{seg: &segment{recs: []record{made(4)}}},
		{seg: &segment{recs: []record{made(1),
			// epoch 1: disjoint Puts (rank 1 int 1 = bytes 4..7, rank 2 int 2 = bytes 8..11; with
			// the origins' unit 1 they would overlap).
			acc(callPut, 1, 4, 1, trace.ReduceNone, 0x101),
			// and a strided Put whose span covers rank 2's int (its type has
			// holes: Err), not compared.
			holes(acc(callPut, 1, 16, 1, trace.ReduceNone, 0x108)),
			// epoch 2: accumulates with one op (SUM) and a fetch with MPI_NO_OP: allowed.
			acc(callAccumulate, 0, 4, 2, trace.ReduceSum, 0x102),
			// epoch 3: two Gets of one int: reads only.
			acc(callGet, 3, 4, 3, trace.ReduceNone, 0x103),
			// epoch 4: a Put inside a lock epoch, against rank 2's Put: not compared.
			lockEpoch(acc(callPut, 0, 4, 4, trace.ReduceNone, 0x104)),
			// epoch 5: a Put against rank 2's Get of the same int: a conflict.
			acc(callPut, 2, 4, 5, trace.ReduceNone, 0x105),
			// epoch 6: accumulates SUM and MAX of one int: a conflict.
			acc(callAccumulate, 1, 4, 6, trace.ReduceSum, 0x106),
			// epoch 0: before any fence (Open MPI's MPI_ERR_RMA_SYNC): not compared.
			acc(callPut, 0, 4, 0, trace.ReduceNone, 0x107),
		}}},
		{seg: &segment{recs: []record{made(1),
			acc(callPut, 2, 4, 1, trace.ReduceNone, 0x201),
			acc(callAccumulate, 0, 4, 2, trace.ReduceSum, 0x202),
			acc(callFetchAndOp, 0, 4, 2, trace.ReduceNoOp, 0x203),
			acc(callGet, 3, 4, 3, trace.ReduceNone, 0x204),
			acc(callPut, 0, 4, 4, trace.ReduceNone, 0x205),
			acc(callGet, 2, 4, 5, trace.ReduceNone, 0x206),
			acc(callAccumulate, 1, 4, 6, trace.ReduceMax, 0x207),
			acc(callPut, 0, 4, 0, trace.ReduceNone, 0x208),
		}}},
	}
	site := pcSites("r.c")
	fs := rmaFindings(ranks, site)
	if len(fs) != 2 {
		t.Fatalf("%d findings, want the Put-Get and SUM-MAX conflicts:\n%v", len(fs), fs)
	}
	for i, want := range []struct {
		lines []string
		text  string
	}{
		{[]string{"r.c:105", "r.c:206"}, "rank 1's MPI_Put at r.c:105 and rank 2's MPI_Get at r.c:206 touch bytes 8..11 of rank 0's window (made by MPI_Win_create at r.c:10) in one fence epoch (between the window's MPI_Win_fence calls 5 and 6), and one of them writes"},
		{[]string{"r.c:106", "r.c:207"}, "they accumulate with different ops or basic datatypes"},
	} {
		wantConflict(t, i, fs[i], want.lines[0], want.lines[1], want.text)
	}
}

// TestRMAOriginWritten: a synchronization call's RMA record naming an
// access's ordinal (the shim saw the access's origin buffer changed when
// that call completed it) is an in-flight mutation at the access and the
// call; one naming no access of the rank is nothing, and an epoch's end is
// not one. A written Get's origin buffer is a recv-buffer-write.
func TestRMAOriginWritten(t *testing.T) {
	rd := &rankData{seg: &segment{recs: []record{
		{Type: recRMA, Call: callWinCreate, Comm: 5, Count: 4, Bytes: 16, PC: 0x10},
		{Type: recRMA, Call: callPut, Comm: 5, Peer: 0, Count: 0, Bytes: 4, Index: 1, Req: 1, PC: 0x11},
		{Type: recRMA, Call: callPut, Comm: 5, Peer: 2, Count: 1, Bytes: 4, Index: 1, Req: 2, PC: 0x12},
		{Type: recRMA, Call: callWinFence, Req: 2, PC: 0x14},
		{Type: recRMA, Call: callWinUnlock, Req: 9, PC: 0x15},
		{Type: recRMA, Call: callGet, Comm: 5, Peer: 0, Count: 2, Bytes: 4, Index: 2, Req: 3, PC: 0x16},
		{Type: recRMA, Call: callWinFence, Op: rmaWritten, Req: 3, PC: 0x17},
		{Type: recRMA, Call: callWinUnlockAll, Op: rmaEpochEnd, Req: 1, PC: 0x18}, // (an epoch's end: its Req is a lock's)
	}}}
	site := pcSites("o.c")
	fs := rmaFindings([]*rankData{nil, rd}, site)
	if len(fs) != 2 {
		t.Fatalf("%d findings, want the second Put's and the Get's: %v", len(fs), fs)
	}
	if g := fs[1]; g.Kind != verdict.RecvBufferWrite || len(g.Ops) != 2 || g.Ops[0].Site != "o.c:16" || g.Ops[1].Site != "o.c:17" ||
		!strings.HasPrefix(g.Message, "rank 1: the program wrote the origin buffer of MPI_Get at o.c:16 from rank 0 before the access completed (seen at MPI_Win_fence at o.c:17)") {
		t.Errorf("Get's finding: %s ops %+v %q", g.Kind, g.Ops, g.Message)
	}
	f := fs[0]
	if f.Kind != verdict.InFlightMutation || !slices.Equal(f.Ranks, []int{1}) || len(f.Ops) != 2 ||
		f.Ops[0].Site != "o.c:12" || f.Ops[1].Site != "o.c:14" || f.Ops[1].Call != "MPI_Win_fence" {
		t.Fatalf("finding %s ranks %v ops %+v, want rank 1's in-flight mutation at o.c:12 and its fence at o.c:14", f.Kind, f.Ranks, f.Ops)
	}
	if want := "rank 1: the origin buffer of MPI_Put at o.c:12 to rank 2 was written before MPI_Win_fence at o.c:14 completed it"; !strings.HasPrefix(f.Message, want) {
		t.Errorf("message %q, want it to begin %q", f.Message, want)
	}
}

// TestRMARequestOriginWritten: the origin buffer of a request-based
// access (MPI_Rput, MPI_Rget) is the library's until the wait or test that
// completes its request, which the finding names, and its hint says so;
// a fetching accumulate's result buffer is named as such.
func TestRMARequestOriginWritten(t *testing.T) {
	rd := &rankData{seg: &segment{recs: []record{
		{Type: recRMA, Call: callWinCreate, Comm: 5, Count: 4, Bytes: 16, PC: 0x10},
		{Type: recRMA, Call: callRput, Comm: 5, Peer: 0, Count: 3, Bytes: 4, Flag: true, Op: rmaEpochExcl, Req: 1, PC: 0x11},
		{Type: recRMA, Call: callWait, Req: 1, PC: 0x12},
		{Type: recRMA, Call: callRget, Comm: 5, Peer: 0, Count: 2, Bytes: 4, Flag: true, Op: rmaEpochShared, Req: 2, PC: 0x13},
		{Type: recRMA, Call: callWaitall, Op: rmaWritten, Req: 2, PC: 0x14},
		{Type: recRMA, Call: callFetchAndOp, Comm: 5, Peer: 0, Count: 1, Bytes: 4, Index: 1, Req: 3, PC: 0x15},
		{Type: recRMA, Call: callWinFence, Op: rmaWritten, Flag: true, Req: 3, PC: 0x16}, // (Flag: its result buffer)
	}}}
	site := pcSites("o.c")
	fs := rmaFindings([]*rankData{nil, rd}, site)
	if len(fs) != 3 {
		t.Fatalf("%d findings, want the Rput's, the Rget's and the Fetch_and_op's: %v", len(fs), fs)
	}
	put, get, fetch := fs[0], fs[1], fs[2]
	if fetch.Kind != verdict.RecvBufferWrite ||
		!strings.HasPrefix(fetch.Message, "rank 1: the program wrote the result buffer of MPI_Fetch_and_op at o.c:15 from rank 0 before the access completed (seen at MPI_Win_fence at o.c:16)") ||
		fetch.Hint != "do not touch the result buffer of MPI_Fetch_and_op until the MPI_Win_fence, MPI_Win_unlock, MPI_Win_complete or flush that completes it returned" {
		t.Errorf("Fetch_and_op's finding: %s %q hint %q", fetch.Kind, fetch.Message, fetch.Hint)
	}
	if put.Kind != verdict.InFlightMutation || len(put.Ops) != 2 || put.Ops[1].Call != "MPI_Wait" ||
		!strings.HasPrefix(put.Message, "rank 1: the origin buffer of MPI_Rput at o.c:11 to rank 0 was written before MPI_Wait at o.c:12 completed it") {
		t.Errorf("Rput's finding: %s ops %+v %q", put.Kind, put.Ops, put.Message)
	}
	if want := "do not write the origin buffer of MPI_Rput until the wait or test that completes its request (or the MPI_Win_unlock or flush that ends the access) returned"; put.Hint != want {
		t.Errorf("Rput's hint %q, want %q", put.Hint, want)
	}
	if get.Kind != verdict.RecvBufferWrite || len(get.Ops) != 2 || get.Ops[1].Call != "MPI_Waitall" ||
		!strings.HasPrefix(get.Message, "rank 1: the program wrote the origin buffer of MPI_Rget at o.c:13 from rank 0 before the access completed (seen at MPI_Waitall at o.c:14)") {
		t.Errorf("Rget's finding: %s ops %+v %q", get.Kind, get.Ops, get.Message)
	}
	if want := "do not touch the origin buffer of MPI_Rget until the wait or test that completes its request (or the MPI_Win_unlock or flush that ends the access) returned"; get.Hint != want {
		t.Errorf("Rget's hint %q, want %q", get.Hint, want)
	}
}

// TestRMAConcurrentEpochRule pins the rule of shared lock and start
// epochs: conflicting accesses of two origins' shared epochs are reported
// unless the run's synchronization ordered them (a barrier between the one's
// end and the other's access), whether or not they were open at the same
// time; start epochs when they were open at the same time; exclusive
// epochs, and one origin's successive epochs, never. Each case has a
// window of its own (findings are one per window and target).
func TestRMAConcurrentEpochRule(t *testing.T) {
	const overlap, ordered, exclusive, successive, start, apart = 9, 10, 11, 12, 13, 14
	made := func(win int32) record {
		return record{Type: recRMA, Call: callWinCreate, Comm: win, Count: 4, Bytes: 64, PC: 0x10}
	}
	// acc is an access to rank 0's int 0 of window win at time t in lock
	// epoch ord of the given kind; end is the end of epoch ord at t.
	acc := func(win int32, call uint8, epoch uint8, ord int32, t uint64, pc uint64) record {
		return record{Type: recRMA, Call: call, Comm: win, Peer: 0, Count: 0, Bytes: 4, Flag: true,
			Op: epoch, Source: ord, Dtype: uint8(trace.Int32), T0: t, PC: pc}
	}
	end := func(ord uint64, t uint64) record {
		return record{Type: recRMA, Call: callWinUnlockAll, Op: rmaEpochEnd, Peer: -1, Req: ord, T0: t}
	}
	barrier := record{Type: recPost, Op: uint8(trace.OpBarrier), Comm: 0, Count: 3}
	wins := []record{made(overlap), made(ordered), made(exclusive), made(successive), made(start), made(apart)}
	ranks := []*rankData{
		withPosts(0, append(slices.Clone(wins), barrier)),
		withPosts(1000, append(slices.Clone(wins),
			acc(overlap, callPut, rmaEpochShared, 1, 0, 0x101), end(1, 500), // [1000, 1500]
			acc(ordered, callPut, rmaEpochShared, 2, 600, 0x102), end(2, 700), // [1600, 1700]
			barrier,
			acc(exclusive, callPut, rmaEpochExcl, 3, 800, 0x103), end(3, 900), // [1800, 1900]
			acc(successive, callPut, rmaEpochShared, 4, 1000, 0x104), end(4, 1005),
			acc(successive, callGet, rmaEpochShared, 5, 1010, 0x105), end(5, 1100),
			acc(start, callPut, rmaEpochStart, 6, 2000, 0x106), end(6, 2100), // [3000, 3100]
			acc(apart, callPut, rmaEpochShared, 7, 3500, 0x107), end(7, 3600), // [4500, 4600]
		)),
		withPosts(0, append(slices.Clone(wins),
			acc(overlap, callPut, rmaEpochShared, 1, 1200, 0x201), end(1, 1300), // inside rank 1's
			barrier,
			acc(ordered, callGet, rmaEpochShared, 2, 1750, 0x202), end(2, 1900), // after the barrier that followed rank 1's
			acc(exclusive, callPut, rmaEpochExcl, 3, 1850, 0x203), end(3, 1950), // overlapping, but exclusive
			acc(start, callAccumulate, rmaEpochStart, 4, 3050, 0x204), end(4, 3200), // inside rank 1's
			acc(apart, callGet, rmaEpochShared, 5, 4700, 0x205), end(5, 4800), // after rank 1's, nothing between
		)),
	}
	site := pcSites("l.c")
	fs := rmaFindings(ranks, site)
	if len(fs) != 3 {
		t.Fatalf("%d findings, want three, of the overlapping shared and start epochs and the unordered shared ones: %v", len(fs), fs)
	}
	for i, want := range []struct {
		lines [2]string
		text  string
	}{
		{[2]string{"l.c:101", "l.c:201"}, "in shared lock epochs (MPI_LOCK_SHARED or MPI_Win_lock_all) open at the same time, and both write"},
		{[2]string{"l.c:106", "l.c:204"}, "in access epochs (MPI_Win_start to MPI_Win_complete) open at the same time, and both write"},
		{[2]string{"l.c:107", "l.c:205"}, "in shared lock epochs (MPI_LOCK_SHARED or MPI_Win_lock_all) that no synchronization orders (no message or collective call between the one's end and the other's access), and one of them writes"},
	} {
		wantConflict(t, i, fs[i], want.lines[0], want.lines[1], want.text)
	}
}

// withPosts is a rank's data of records recs, starting at offset, with its
// posts (each recPost, none matched) indexed as the merge does.
func withPosts(offset int64, recs []record) *rankData {
	rd := &rankData{offset: offset, seg: &segment{recs: recs}}
	for i := range recs {
		if recs[i].Type == recPost {
			rd.posts = append(rd.posts, i)
			rd.op = append(rd.op, trace.Op(recs[i].Op))
			rd.skip = append(rd.skip, false)
			rd.doneOf = append(rd.doneOf, -1)
			rd.matchR = append(rd.matchR, trace.NoRank)
			rd.matchS = append(rd.matchS, 0)
			rd.tseq = append(rd.tseq, uint64(len(rd.tseq)))
		}
	}
	return rd
}

// pcSites names a record's site file:pc (pc in hex), for rule tests.
func pcSites(file string) siteTextFunc {
	return func(rd *rankData, module uint32, pc uint64, py uint32) string { return fmt.Sprintf("%s:%x", file, pc) }
}

// wantConflict checks finding i: an rma-conflict of ranks 1 and 2 at sites
// a and b (in that order) whose message says text.
func wantConflict(t *testing.T, i int, f verdict.Finding, a, b, text string) {
	t.Helper()
	if f.Kind != verdict.RMAConflict || !slices.Equal(f.Ranks, []int{1, 2}) || len(f.Ops) != 2 || f.Ops[0].Site != a || f.Ops[1].Site != b {
		t.Errorf("finding %d: %s ranks %v ops %+v, want rma-conflict of ranks 1, 2 at %s, %s", i, f.Kind, f.Ranks, f.Ops, a, b)
	}
	if !strings.Contains(f.Message, text) {
		t.Errorf("finding %d says %q, want it to say %q", i, f.Message, text)
	}
}

// TestRMAOwnWindowBuffers pins ownWindowAccesses: an origin's Get into
// bytes of its own part of the window it accesses writes them in the
// epoch, as a remote Put to them does (MPI-3.1 sec. 11.7); a Put's origin
// buffer there is read, and conflicts only with a write. Windows of rank
// 1 and 2 of disp_unit 4, 16 bytes each, at 0x1000.
func TestRMAOwnWindowBuffers(t *testing.T) {
	const win = 5
	made := record{Type: recRMA, Call: callWinCreate, Comm: win, Count: 4, Bytes: 16, Addr: 0x1000, Span: 16, PC: 0x10}
	// acc: an access to rank target's int disp, 4 bytes, in fence epoch
	// epoch, its origin buffer at addr (0: none known).
	acc := func(call uint8, target int32, disp int64, epoch int32, addr uint64, pc uint64) record {
		return record{Type: recRMA, Call: call, Comm: win, Peer: target, Count: disp, Bytes: 4, Index: epoch,
			Dtype: uint8(trace.Int32), Addr: addr, Span: 4, PC: pc}
	}
	lockEpoch := func(r record) record { r.Flag, r.Op = true, rmaEpochExcl; return r }
	ranks := []*rankData{
		{seg: &segment{recs: []record{made}}},
		{seg: &segment{recs: []record{made,
			// epoch 1: a Put to rank 2's int 1: rank 2's Get lands there.
			acc(callPut, 2, 1, 1, 0x9000, 0x101),
			// epoch 2: a Get of rank 2's int 0, read only.
			acc(callGet, 2, 0, 2, 0x9000, 0x102),
			// epoch 3: a Put to rank 2's int 3, rank 2's own Get lands at int 2.
			acc(callPut, 2, 3, 3, 0x9000, 0x103),
			// epoch 4: a Put to rank 2's int 0 while rank 2 Gets in a lock epoch: not a fence epoch's.
			acc(callPut, 2, 0, 4, 0x9000, 0x104),
		}}},
		{seg: &segment{recs: []record{made,
			acc(callGet, 0, 0, 1, 0x1004, 0x201),            // into its own int 1: a conflict
			acc(callPut, 0, 0, 2, 0x1000, 0x202),            // from its own int 0, which rank 1 only reads: none
			acc(callGet, 0, 0, 3, 0x1008, 0x203),            // into its own int 2: disjoint
			acc(callGet, 0, 0, 3, 0x1008, 0x204),            // and again: its own two Gets (a buffer-overlap's, not this rule's)
			lockEpoch(acc(callGet, 0, 0, 4, 0x1000, 0x205)), // not compared
		}}},
	}
	fs := rmaFindings(ranks, pcSites("r.c"))
	if len(fs) != 1 {
		t.Fatalf("%d findings, want the Put into the bytes of rank 2's Get:\n%v", len(fs), fs)
	}
	wantConflict(t, 0, fs[0], "r.c:101", "r.c:201",
		"rank 1's MPI_Put at r.c:101 and rank 2's origin buffer of MPI_Get at r.c:201 (in its own window) touch bytes 4..7 of rank 2's window (made by MPI_Win_create at r.c:10) in one fence epoch (between the window's MPI_Win_fence calls 1 and 2), and both write")
}

// TestRMAOwnWindowBuffersInLockEpochs: in lock epochs, an origin's Get into
// its own window's bytes is compared with other ranks' shared lock epochs'
// accesses of them as a shared epoch's access (its lock on another rank's
// window does not protect its own memory): reported unless a
// synchronization orders them.
func TestRMAOwnWindowBuffersInLockEpochs(t *testing.T) {
	const win = 6
	made := record{Type: recRMA, Call: callWinCreate, Comm: win, Count: 4, Bytes: 16, Addr: 0x1000, Span: 16, PC: 0x10}
	acc := func(call uint8, target int32, disp int64, epoch uint8, ord int32, addr, t, pc uint64) record {
		return record{Type: recRMA, Call: call, Comm: win, Peer: target, Count: disp, Bytes: 4, Flag: true, Op: epoch, Source: ord,
			Dtype: uint8(trace.Int32), Addr: addr, Span: 4, T0: t, PC: pc}
	}
	end := func(ord uint64, t uint64) record {
		return record{Type: recRMA, Call: callWinUnlock, Op: rmaEpochEnd, Peer: -1, Req: ord, T0: t}
	}
	barrier := record{Type: recPost, Op: uint8(trace.OpBarrier), Comm: 0, Count: 3}
	ranks := []*rankData{
		withPosts(0, []record{made, barrier}),
		withPosts(0, []record{made,
			acc(callPut, 2, 0, rmaEpochShared, 1, 0x9000, 100, 0x101), end(1, 200), // rank 2's int 0
			barrier,
			acc(callPut, 2, 1, rmaEpochShared, 2, 0x9000, 500, 0x102), end(2, 600), // rank 2's int 1
		}),
		withPosts(0, []record{made,
			// Into its own int 1 before the barrier, in an exclusive epoch
			// on rank 0: rank 1's later Put to int 1 comes after the barrier.
			acc(callGet, 0, 0, rmaEpochExcl, 1, 0x1004, 300, 0x201), end(1, 400),
			barrier,
			// Into its own int 0 after the barrier: rank 1's Put to it was
			// before the barrier: ordered. None reported.
			acc(callGet, 0, 0, rmaEpochShared, 2, 0x1000, 700, 0x202), end(2, 800),
		}),
	}
	if fs := rmaFindings(ranks, pcSites("k.c")); len(fs) != 0 {
		t.Fatalf("ordered by the barrier, want no finding: %v", fs)
	}
	// Without the barrier: rank 1's first Put and rank 2's second Get touch
	// rank 2's int 0 unordered, and rank 2's first Get and rank 1's second Put its int 1.
	for _, rd := range ranks[1:] {
		rd.seg.recs = slices.DeleteFunc(slices.Clone(rd.seg.recs), func(p record) bool { return p.Type == recPost })
		*rd = *withPosts(0, rd.seg.recs)
	}
	fs := rmaFindings(ranks, pcSites("k.c"))
	if len(fs) != 2 {
		t.Fatalf("%d findings, want two: %v", len(fs), fs)
	}
	wantConflict(t, 0, fs[0], "k.c:101", "k.c:202",
		"rank 1's MPI_Put at k.c:101 and rank 2's origin buffer of MPI_Get at k.c:202 (in its own window) touch bytes 0..3 of rank 2's window")
	wantConflict(t, 1, fs[1], "k.c:102", "k.c:201", "touch bytes 4..7 of rank 2's window")
}

// TestAccumulateElementRule: concurrent accumulates with one op conflict
// unless their target types are made of the same predefined datatype and
// their elements lie on one grid (MPI-3.1 sec. 11.7.1: atomic element by
// element), which the shim records as an element code (StatTag: MPI_SHORT's,
// a contiguous of MPI_INTs as MPI_INT's, with the element's size), and an
// older shim's trace, without codes, as its five basic types (Dtype).
func TestAccumulateElementRule(t *testing.T) {
	const intCode, shortCode = 3 | 4<<8, 2 | 2<<8 // (the shim's element_code: predefined_code | size << 8)
	acc := func(dt trace.Dtype, code int32) *rmaAccess {
		return &rmaAccess{rec: &record{Type: recRMA, Call: callAccumulate, Tag: int32(trace.ReduceSum), Dtype: uint8(dt), StatTag: code}}
	}
	at := func(a *rmaAccess, lo int64) *rmaAccess { a.lo, a.hi = lo, lo+16; return a }
	op := func(a *rmaAccess, o trace.ReduceOp) *rmaAccess { a.rec.Tag = int32(o); return a }
	from := func(a *rmaAccess, rank int) *rmaAccess { a.rank = rank; return a }
	for _, tc := range []struct {
		name     string
		a, b     *rmaAccess
		conflict bool
	}{
		{"int and a contiguous of ints", acc(trace.Int32, intCode), acc(trace.Opaque, intCode), false},
		{"short and short", acc(trace.Opaque, shortCode), acc(trace.Opaque, shortCode), false},
		{"short and int", acc(trace.Opaque, shortCode), acc(trace.Int32, intCode), true},
		{"a mixed type (no code) and int", acc(trace.Opaque, 0), acc(trace.Int32, intCode), true},
		{"older trace: int and int", acc(trace.Int32, 0), acc(trace.Int32, 0), false},
		{"older trace: opaque and opaque", acc(trace.Opaque, 0), acc(trace.Opaque, 0), true},
		// (RMARaceBench's atomic/003: a window of disp_unit 1, ints at
		// bytes 0 and 1 straddle each other's elements.)
		{"ints one element apart", at(acc(trace.Int32, intCode), 0), at(acc(trace.Int32, intCode), 4), false},
		{"ints a byte apart", at(acc(trace.Int32, intCode), 0), at(acc(trace.Int32, intCode), 1), true},
		{"older trace: ints a byte apart", at(acc(trace.Int32, 0), 0), at(acc(trace.Int32, 0), 1), true},
		// One origin's accumulates of one datatype are ordered (MPI-3.1
		// sec. 11.7.2), whatever their ops (MPICH's acc_ordering: MAXLOC
		// then REPLACE); of two datatypes they are not (RMARaceBench's
		// atomic/007); two origins' with two ops conflict.
		{"one origin, SUM then MAX", acc(trace.Int32, intCode), op(acc(trace.Int32, intCode), trace.ReduceMax), false},
		{"one origin, int then short", acc(trace.Opaque, intCode), acc(trace.Opaque, shortCode), true},
		{"two origins, SUM and MAX", acc(trace.Int32, intCode), from(op(acc(trace.Int32, intCode), trace.ReduceMax), 1), true},
	} {
		why, conflict := rmaConflict(tc.a, tc.b)
		if conflict != tc.conflict {
			t.Errorf("%s: conflict %v (%q), want %v", tc.name, conflict, why, tc.conflict)
		}
	}
}

// TestRMAFlushOrdersAccesses: an MPI_Win_flush of an access's target (or
// MPI_Win_flush_all) completes it at the target (MPI-3.1 sec. 11.5.4), so
// it orders the access before the origin's later ones in the same shared
// lock epoch (RMARaceBench's sync/023), and, with a barrier after it,
// before another origin's; a flush of another target, or none
// (MPI_Win_flush_local completes only at the origin: no record), orders
// nothing.
func TestRMAFlushOrdersAccesses(t *testing.T) {
	const flushed, flushedAll, otherTarget, unflushed, acrossRanks = 21, 22, 23, 24, 25
	made := func(win int32) record {
		return record{Type: recRMA, Call: callWinCreate, Comm: win, Count: 4, Bytes: 64, PC: 0x10}
	}
	acc := func(win int32, call uint8, ord int32, t uint64, pc uint64) record {
		return record{Type: recRMA, Call: call, Comm: win, Peer: 0, Count: 0, Bytes: 4, Flag: true,
			Op: rmaEpochShared, Source: ord, Dtype: uint8(trace.Int32), T0: t, PC: pc}
	}
	flush := func(win int32, peer int32, t uint64) record {
		return record{Type: recRMA, Call: callWinFlush, Op: rmaFlush, Comm: win, Peer: peer, T0: t}
	}
	end := func(ord uint64, t uint64) record {
		return record{Type: recRMA, Call: callWinUnlockAll, Op: rmaEpochEnd, Peer: -1, Req: ord, T0: t}
	}
	barrier := record{Type: recPost, Op: uint8(trace.OpBarrier), Comm: 0, Count: 3}
	wins := []record{made(flushed), made(flushedAll), made(otherTarget), made(unflushed), made(acrossRanks)}
	ranks := []*rankData{
		withPosts(0, append(slices.Clone(wins), barrier)),
		withPosts(0, append(slices.Clone(wins),
			acc(flushed, callPut, 1, 0, 0x101), flush(flushed, 0, 10), acc(flushed, callGet, 1, 20, 0x102), end(1, 30),
			acc(flushedAll, callPut, 2, 40, 0x103), flush(flushedAll, -1, 50), acc(flushedAll, callPut, 2, 60, 0x104), end(2, 70),
			acc(otherTarget, callPut, 3, 80, 0x105), flush(otherTarget, 2, 90), acc(otherTarget, callGet, 3, 100, 0x106), end(3, 110),
			acc(unflushed, callPut, 4, 120, 0x107), acc(unflushed, callGet, 4, 140, 0x108), end(4, 150),
			acc(acrossRanks, callPut, 5, 200, 0x109), flush(acrossRanks, 0, 210), barrier, end(5, 900),
		)),
		withPosts(0, append(slices.Clone(wins),
			barrier, acc(acrossRanks, callGet, 1, 300, 0x201), end(1, 800), // open while rank 1's epoch is: only the flush and the barrier order them
		)),
	}
	fs := rmaFindings(ranks, pcSites("f.c"))
	if len(fs) != 2 {
		t.Fatalf("%d findings, want two: the flush of another target's and the unflushed pair's: %v", len(fs), fs)
	}
	for i, lines := range [][2]string{{"f.c:105", "f.c:106"}, {"f.c:107", "f.c:108"}} {
		if len(fs[i].Ops) != 2 || fs[i].Ops[0].Site != lines[0] || fs[i].Ops[1].Site != lines[1] {
			t.Errorf("finding %d: %v, want the accesses at %s and %s", i, fs[i].Ops, lines[0], lines[1])
		}
	}
}

// TestRMAStartEpochsByExposure: access epochs of MPI_Win_start of two
// origins are concurrent when they accessed the same exposure epoch of
// their target (MPI_Win_post to MPI_Win_wait), however far apart in time
// (RMARaceBench's sync/035, found in some runs before), and ordered when
// they accessed two, however they overlapped in time: each origin's m-th
// start naming the target matches the target's m-th post naming it
// (MPI-3.1 sec. 11.5.2).
func TestRMAStartEpochsByExposure(t *testing.T) {
	const win = 31
	made := record{Type: recRMA, Call: callWinCreate, Comm: win, Count: 4, Bytes: 64, PC: 0x10}
	group := func(call uint8, ord uint64, ranks ...uint64) record {
		return record{Type: recRMA, Call: call, Op: rmaGroup, Comm: win, Req: ord, Reqs: ranks}
	}
	acc := func(call uint8, disp int64, ord int32, t uint64, pc uint64) record {
		return record{Type: recRMA, Call: call, Comm: win, Peer: 0, Count: disp, Bytes: 4, Flag: true,
			Op: rmaEpochStart, Source: ord, Dtype: uint8(trace.Int32), T0: t, PC: pc}
	}
	end := func(ord uint64, t uint64) record {
		return record{Type: recRMA, Call: callWinComplete, Op: rmaEpochEnd, Peer: -1, Req: ord, T0: t}
	}
	ranks := []*rankData{
		withPosts(0, []record{made, group(callWinPost, 0, 1, 2), group(callWinPost, 0, 1), group(callWinPost, 0, 2)}),
		withPosts(0, []record{made,
			group(callWinStart, 1, 0), acc(callPut, 0, 1, 0, 0x101), end(1, 10), // exposure 0
			group(callWinStart, 2, 0), acc(callPut, 1, 2, 100, 0x102), end(2, 110), // exposure 1
		}),
		withPosts(0, []record{made,
			group(callWinStart, 1, 0), acc(callGet, 0, 1, 500, 0x201), end(1, 510), // exposure 0, long after rank 1's
			group(callWinStart, 2, 0), acc(callPut, 1, 2, 105, 0x202), end(2, 115), // exposure 2, in flight with rank 1's second
		}),
	}
	fs := rmaFindings(ranks, pcSites("s.c"))
	if len(fs) != 1 {
		t.Fatalf("%d findings, want one, of the epochs of one exposure: %v", len(fs), fs)
	}
	wantConflict(t, 0, fs[0], "s.c:101", "s.c:201", "in access epochs (MPI_Win_start to MPI_Win_complete) of one exposure epoch of the target (MPI_Win_post to MPI_Win_wait), and one of them writes")
}

// TestRMADynamicWindowAddresses: a dynamic window's displacements are
// addresses (MPI_Win_create_dynamic, MPI_Get_address), and a conflict on
// one says the addresses, not "bytes 140734724326112..".
func TestRMADynamicWindowAddresses(t *testing.T) {
	const win = 41
	made := record{Type: recRMA, Call: callWinCreateDynamic, Comm: win, Count: 1, PC: 0x10}
	put := func(pc uint64) record {
		return record{Type: recRMA, Call: callPut, Comm: win, Peer: 0, Count: 0x7ffe1000, Bytes: 4, Index: 1, Dtype: uint8(trace.Int32), PC: pc}
	}
	ranks := []*rankData{
		{seg: &segment{recs: []record{made}}},
		{seg: &segment{recs: []record{made, put(0x101)}}},
		{seg: &segment{recs: []record{made, put(0x201)}}},
	}
	fs := rmaFindings(ranks, pcSites("d.c"))
	if len(fs) != 1 {
		t.Fatalf("%d findings, want the two Puts' conflict: %v", len(fs), fs)
	}
	if want := "touch the bytes at addresses 0x7ffe1000..0x7ffe1003 of rank 0's window (made by MPI_Win_create_dynamic at d.c:10)"; !strings.Contains(fs[0].Message, want) {
		t.Errorf("message %q lacks %q", fs[0].Message, want)
	}
}

// TestRMAOriginWrittenInALoop: a loop that writes the origin buffer of each
// of its accesses before the fence that completes them is one bug, one
// finding per pair of sites however many times it ran (MPICH's atomic_get
// wrote it 2.4 million times, and formatting a finding each took the merge
// minutes and gigabytes).
func TestRMAOriginWrittenInALoop(t *testing.T) {
	recs := []record{{Type: recRMA, Call: callWinCreate, Comm: 5, Count: 4, Bytes: 16, PC: 0x10}}
	for i := range 1000 {
		req := uint64(i + 1)
		recs = append(recs,
			record{Type: recRMA, Call: callAccumulate, Comm: 5, Peer: 0, Bytes: 4, Index: 1, Req: req, PC: 0x11, Tag: int32(trace.ReduceReplace)},
			record{Type: recRMA, Call: callWinFence, Op: rmaWritten, Req: req, PC: 0x17}) // (its result buffer written)
	}
	for i := range 1000 {
		recs = append(recs, record{Type: recRMA, Call: callWinFence, Req: uint64(i + 1), PC: 0x14})
	}
	fs := originFindings(1, &rankData{seg: &segment{recs: recs}}, pcSites("o.c"))
	wantPairs(t, fs, "recv-buffer-write o.c:11-o.c:17", "in-flight-mutation o.c:11-o.c:14")
}

// wantPairs checks that fs are findings of two ops each, "kind site-site"
// as want says, in order.
func wantPairs(t *testing.T, fs []verdict.Finding, want ...string) {
	t.Helper()
	var got []string
	for _, f := range fs {
		if len(f.Ops) != 2 {
			t.Errorf("%s finding with %d ops, want 2: %q", f.Kind, len(f.Ops), f.Message)
			continue
		}
		got = append(got, fmt.Sprintf("%s %s-%s", f.Kind, f.Ops[0].Site, f.Ops[1].Site))
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// TestFirstConflictScansEveryPair: firstConflict, which scans each kind of
// access once, finds the pair (and the reason) that comparing every access
// with every later one that overlaps it finds, on random fence epochs of
// few sites, ranks, calls and locations, many accesses alike.
func TestFirstConflictScansEveryPair(t *testing.T) {
	calls := []uint8{callPut, callGet, callAccumulate, callGetAccumulate, callFetchAndOp}
	ops := []trace.ReduceOp{trace.ReduceSum, trace.ReduceMax, trace.ReduceNoOp, trace.ReduceReplace}
	const intCode = 3 | 4<<8
	rng := rand.New(rand.NewPCG(1, 2))
	everyPair := func(acc []rmaAccess) (int, int, string, bool) {
		for i := range acc {
			for j := i + 1; j < len(acc) && acc[j].lo < acc[i].hi; j++ {
				if acc[i].local != "" && acc[j].local != "" {
					continue
				}
				if why, ok := rmaConflict(&acc[i], &acc[j]); ok {
					return i, j, why, true
				}
			}
		}
		return 0, 0, "", false
	}
	found := 0
	for n := range 3000 {
		acc := make([]rmaAccess, 1+rng.IntN(40))
		for i := range acc {
			lo := int64(4 * rng.IntN(4))
			rec := &record{Type: recRMA, Call: calls[rng.IntN(len(calls))], Tag: int32(ops[rng.IntN(len(ops))]),
				Dtype: uint8(trace.Int32), StatTag: intCode, PC: uint64(rng.IntN(3))}
			acc[i] = rmaAccess{rank: rng.IntN(2), rec: rec, lo: lo, hi: lo + 4*int64(1+rng.IntN(2))}
			if rng.IntN(8) == 0 {
				acc[i].local = "origin buffer"
			}
		}
		slices.SortStableFunc(acc, func(a, b rmaAccess) int { return cmp.Or(cmp.Compare(a.lo, b.lo), cmp.Compare(a.rank, b.rank)) })
		i, j, why, ok := firstConflict(acc)
		wi, wj, wwhy, wok := everyPair(acc)
		if i != wi || j != wj || why != wwhy || ok != wok {
			t.Fatalf("epoch %d: firstConflict (%d, %d, %q, %v), every pair (%d, %d, %q, %v)", n, i, j, why, ok, wi, wj, wwhy, wok)
		}
		if ok {
			found++
		}
	}
	if found == 0 || found == 3000 {
		t.Errorf("%d of 3000 epochs conflict: the cases do not tell", found)
	}
}

// TestRMARgetEndsAtItsWait: an MPI_Rget whose request a wait completed has
// read its data (MPI-3.1 sec. 11.3.5: the data is in the origin buffer), so
// the rank's later Rput to the same bytes in the same lock_all epoch does
// not conflict with it (MPICH's req_example, Rget, Wait, then Rput of the
// buffer got), nor another rank's Rput after a barrier that followed the
// wait; nor, likewise, an MPI_Rget_accumulate's (its fetch and update are
// one operation at the target: MPICH's reqops, Rget_accumulate, Wait, then
// Rget). An Rput before the wait does; an MPI_Rput's wait completes it only
// at the origin, so a later Rget of its bytes conflicts until a flush or
// the epoch's end.
func TestRMARgetEndsAtItsWait(t *testing.T) {
	const waited, early, putFirst, barrierAfter, fetched = 21, 22, 23, 24, 25
	made := func(win int32) record {
		return record{Type: recRMA, Call: callWinCreate, Comm: win, Count: 8, Bytes: 64, PC: 0x10}
	}
	acc := func(win int32, call uint8, ord int32, req uint64, t uint64, pc uint64) record {
		return record{Type: recRMA, Call: call, Comm: win, Peer: 0, Count: 0, Bytes: 8, Flag: true,
			Op: rmaEpochShared, Source: ord, Req: req, Dtype: uint8(trace.Float64), T0: t, PC: pc}
	}
	done := func(win int32, req uint64, t uint64) record {
		return record{Type: recRMA, Call: callWait, Op: rmaReqDone, Comm: win, Req: req, T0: t, PC: 0x30}
	}
	end := func(ord uint64, t uint64) record {
		return record{Type: recRMA, Call: callWinUnlockAll, Op: rmaEpochEnd, Peer: -1, Req: ord, T0: t}
	}
	barrier := record{Type: recPost, Op: uint8(trace.OpBarrier), Comm: 0, Count: 3}
	wins := []record{made(waited), made(early), made(putFirst), made(barrierAfter), made(fetched)}
	replace := acc(fetched, callRgetAccumulate, 5, 8, 6000, 0x108)
	replace.Tag = int32(trace.ReduceReplace)
	ranks := []*rankData{
		withPosts(0, append(slices.Clone(wins), barrier)),
		withPosts(0, append(slices.Clone(wins),
			acc(waited, callRget, 1, 1, 0, 0x101), done(waited, 1, 10), acc(waited, callRput, 1, 2, 20, 0x102), end(1, 100),
			acc(early, callRget, 2, 3, 200, 0x103), acc(early, callRput, 2, 4, 210, 0x104), done(early, 3, 220), end(2, 300),
			acc(putFirst, callRput, 3, 5, 400, 0x105), acc(putFirst, callRget, 3, 6, 410, 0x106), done(putFirst, 6, 420), end(3, 500),
			acc(barrierAfter, callRget, 4, 7, 600, 0x107), done(barrierAfter, 7, 610),
			barrier,
			end(4, 5000), // (the epoch stays open: the Rget's wait, not its end, orders it)
			replace, done(fetched, 8, 6010), acc(fetched, callRget, 5, 9, 6020, 0x109), done(fetched, 9, 6030), end(5, 6100),
		)),
		withPosts(0, append(slices.Clone(wins),
			barrier,
			acc(barrierAfter, callRput, 1, 1, 700, 0x201), end(1, 800),
		)),
	}
	wantPairs(t, rmaFindings(ranks, pcSites("r.c")), "rma-conflict r.c:103-r.c:104", "rma-conflict r.c:105-r.c:106")
}

// TestRMAMixedEpochNeedsAnEpoch: a lock between two fences is reported only
// when the fences made an epoch (MPI-3.1 sec. 11.5.1): the locking rank made
// an RMA call between them (its lock epoch's own Put counts), or another
// rank accessed the window it locked there (an MPI_Win_lock_all locks every
// rank's). Between fences with no RMA call, or with calls that touch other
// ranks only, it is no error.
func TestRMAMixedEpochNeedsAnEpoch(t *testing.T) {
	const win = 7
	made := record{Type: recRMA, Call: callWinCreate, Comm: win, Count: 4, Bytes: 16, PC: 0x10}
	mixed := func(peer int32) record {
		return record{Type: recRMA, Call: callWinLock, Op: rmaMixed, Comm: win, Index: 1, Peer: peer, PC: 0x20}
	}
	put := func(target int32, index int32) record {
		return record{Type: recRMA, Call: callPut, Comm: win, Peer: target, Bytes: 4, Index: index, PC: 0x30}
	}
	for _, tc := range []struct {
		name        string
		r1, r2      []record // ranks 1 and 2 (rank 0 only made the window)
		wantFinding bool
	}{
		{"its own Put between the fences", []record{mixed(0), put(0, 1)}, nil, true},
		{"no RMA call between the fences", []record{mixed(0)}, nil, false},
		{"RMA calls between other fences", []record{mixed(0), put(0, 2)}, []record{put(0, 0)}, false},
		{"another rank's Put to the locked window", []record{mixed(0)}, []record{put(0, 1)}, true},
		{"another rank's Put to another window", []record{mixed(0)}, []record{put(2, 1)}, false},
		{"lock_all, another rank's Put to any window", []record{mixed(-1)}, []record{put(0, 1)}, true},
		{"lock_all, a rank's Put to its own window", []record{mixed(-1)}, []record{put(2, 1)}, false},
	} {
		ranks := []*rankData{
			{seg: &segment{recs: []record{made}}},
			{seg: &segment{recs: append([]record{made}, tc.r1...)}},
			{seg: &segment{recs: append([]record{made}, tc.r2...)}},
		}
		var got bool
		for _, f := range rmaFindings(ranks, pcSites("m.c")) {
			if f.Kind == verdict.InvalidCall && len(f.Ops) == 1 && f.Ops[0].Site == "m.c:20" && slices.Equal(f.Ranks, []int{1}) {
				got = true
			}
		}
		if got != tc.wantFinding {
			t.Errorf("%s: lock-in-fence finding %v, want %v", tc.name, got, tc.wantFinding)
		}
	}
}
