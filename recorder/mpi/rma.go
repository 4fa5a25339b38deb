package mpi

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// rmaCAS is the op code of a compare-and-swap's access record (the shim's
// RMA_CAS): an atomic of its own, as an accumulate's op is.
const rmaCAS = 255

// The epoch of an access, in its record's Op (the shim's RMA_EPOCH_*),
// and rmaEpochEnd, the record of a lock or start epoch's end (Req: the
// epoch's ordinal on its rank, T0: when the unlock or complete returned).
const (
	rmaEpochFence  = iota // a fence epoch (or none)
	rmaEpochExcl          // MPI_Win_lock(MPI_LOCK_EXCLUSIVE); Source: the epoch's ordinal
	rmaEpochShared        // MPI_Win_lock(MPI_LOCK_SHARED) or MPI_Win_lock_all; Source likewise
	rmaEpochStart         // MPI_Win_start to MPI_Win_complete; Source likewise
	rmaEpochEnd
	// rmaWritten: a Get's origin buffer the program wrote before the access
	// completed (Req: the access's ordinal; Call, PC: the call that saw it).
	rmaWritten
	// rmaMixed: a lock epoch opened inside a fence epoch (Call, PC: the
	// MPI_Win_lock or MPI_Win_lock_all; Index: the fences on the window
	// before it; Peer: the world rank it locked, -1 for all), written at
	// the fence that closed that epoch: see mixedEpochFindings.
	rmaMixed
	// rmaOverlap: an access whose origin or result buffer, which the
	// library writes, overlaps the one of a pending access of the rank that
	// writes its too (Call, PC: the new access; Req: its ordinal; Source:
	// the pending one's; Bytes: the bytes in common). See originFindings.
	rmaOverlap
	// rmaFlush: an MPI_Win_flush or MPI_Win_flush_all returned (Peer: the
	// target's world rank, -1 for all; Req: the rank's last access ordinal
	// then; T0: when). The rank's accesses before it to those targets are
	// complete at their target (MPI-3.1 sec. 11.5.4): see
	// concurrentEpochFindings.
	rmaFlush
	// rmaGroup: an MPI_Win_post or MPI_Win_start returned (Call: which;
	// Reqs: the world ranks of its group; Req: a start's epoch ordinal, as
	// its accesses' Source). See exposures.
	rmaGroup
	// rmaReleased: the program released a window's memory while the window
	// lived (Comm: the window's id; Flag: free() released it, PC: where it
	// was called; else the frame that held it returned, PC: the call made
	// from above it; Call: the call that saw it). See releasedFindings.
	rmaReleased
	// rmaReqDone: a wait or test completed the request of an access that
	// fetches, MPI_Rget or MPI_Rget_accumulate (Call, PC: the wait or test;
	// Req: the access's ordinal; T0: when). The data is in its origin or
	// result buffer (MPI-3.1 sec. 11.3.5): the access was done at the
	// target, its update with it (one atomic operation). See
	// concurrentEpochFindings.
	rmaReqDone
)

// rmaAccess is one one-sided access as the rule compares them: the
// origin's world rank, its record, and the bytes [lo, hi) of the target's
// window it touches.
type rmaAccess struct {
	rank   int
	rec    *record
	idx    int // rec's index in its rank's records
	lo, hi int64
	// local names the buffer of the origin's own access whose bytes lie in
	// its own window ("origin buffer", "result buffer"); "" for an access
	// of the target's window. See ownWindowAccesses.
	local string
}

// winKey is one member's view of a window: its world rank and the window's id.
type winKey struct {
	rank int
	win  int32
}

// windowMade is a window's making, as one member recorded it.
type windowMade struct {
	rank int
	rec  *record
}

// makesWindow reports whether call makes a window (its record carries the
// rank's disp_unit).
func makesWindow(call uint8) bool {
	switch call {
	case callWinCreate, callWinAllocate, callWinAllocateShared, callWinCreateDynamic:
		return true
	}
	return false
}

// accessCall reports whether call is a one-sided access (its record is
// an access's, not a window's making or a written origin buffer's).
func accessCall(call uint8) bool { return call >= callPut && call <= callRgetAccumulate }

// requestAccess reports whether an access call returns a request, whose
// completion completes the access at the origin (MPI-3.1 sec. 11.3.5).
func requestAccess(call uint8) bool {
	switch call {
	case callRput, callRget, callRaccumulate, callRgetAccumulate:
		return true
	}
	return false
}

// rmaAtomic reports whether the access is an accumulate's: MPI_Accumulate,
// MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap and their
// request forms, which may touch one location concurrently with the same
// op and basic datatype (MPI-3.1 sec. 11.7.1).
func (a *rmaAccess) atomic() bool {
	if a.local != "" {
		return false // the library copies to or from the buffer
	}
	switch a.rec.Call {
	case callAccumulate, callRaccumulate, callGetAccumulate, callRgetAccumulate, callFetchAndOp, callCompareAndSwap:
		return true
	}
	return false
}

// writes reports whether the access updates the target's bytes: all but a
// get and an accumulate that fetches with MPI_NO_OP.
func (a *rmaAccess) writes() bool {
	if a.local != "" {
		// A Get writes its origin buffer, a fetch its result buffer; the
		// others read their origin buffer.
		return a.local == "result buffer" || a.rec.Call == callGet || a.rec.Call == callRget
	}
	switch a.rec.Call {
	case callGet, callRget:
		return false
	case callGetAccumulate, callRgetAccumulate, callFetchAndOp:
		return trace.ReduceOp(a.rec.Tag) != trace.ReduceNoOp
	}
	return true
}

// sameElement reports whether two accumulates' target types are made of
// the same predefined datatype, and their elements lie on one grid (an
// accumulate is atomic element by element: two whose elements straddle
// each other's are not, MPI-3.1 sec. 11.7.1). The type is the shim's
// element code (StatTag: code | size << 8, which knows every predefined
// type and derived types built of one), else, in a trace of an older shim,
// the basic type (Dtype: five known).
func sameElement(a, b *rmaAccess) bool {
	var size int64
	if ta, tb := a.rec.StatTag, b.rec.StatTag; ta != 0 && tb != 0 {
		if ta&0xff != tb&0xff {
			return false
		}
		size = int64(ta >> 8)
	} else {
		if a.rec.Dtype != b.rec.Dtype || trace.Dtype(a.rec.Dtype) == trace.Opaque || a.rec.Dtype == 0 {
			return false
		}
		size = int64(trace.Dtype(a.rec.Dtype).Size())
	}
	return size <= 0 || (a.lo-b.lo)%size == 0
}

// rmaConflict reports whether two accesses of one epoch to overlapping
// bytes conflict, and why. MPI-3.1 sec. 11.7: a location updated by a put
// or an accumulate must not be accessed by another RMA operation until the
// update completed, except by concurrent accumulates with the same
// predefined datatype (with the default accumulate_ops, same_op_no_op,
// sec. 11.2.1: the same op, or MPI_NO_OP). Two accumulates of one origin
// with the same predefined datatype are not concurrent, whatever their
// ops: the default accumulate_ordering orders them (sec. 11.7.2, "on a
// per-datatype granularity"; MPICH's acc_ordering test). (The shim does not
// record a window's accumulate_ordering info: one that sets "none" is
// taken as the default.)
func rmaConflict(a, b *rmaAccess) (string, bool) {
	if !a.writes() && !b.writes() {
		return "", false
	}
	if a.atomic() && b.atomic() && a.rank == b.rank && sameElement(a, b) {
		return "", false
	}
	if a.atomic() && b.atomic() {
		opA, opB := a.rec.Tag, b.rec.Tag
		sameOp := opA == opB || trace.ReduceOp(opA) == trace.ReduceNoOp || trace.ReduceOp(opB) == trace.ReduceNoOp
		if sameOp && opA != int32(trace.ReduceUser) && sameElement(a, b) {
			return "", false
		}
		return "they accumulate with different ops or basic datatypes", true
	}
	if a.writes() && b.writes() {
		return "both write", true
	}
	return "one of them writes", true
}

// rmaFindings reports conflicting one-sided accesses (verdict.RMAConflict):
// two accesses of one fence epoch (between two MPI_Win_fence calls, which
// are collective, so the epoch is the same on every member of the window)
// that touch the same bytes of one target's window, one of them writing,
// as rmaConflict says. One finding per window, target and epoch: its
// first conflicting pair, in the order of the bytes they touch. An access
// whose target type has holes (its record's Err: a strided vector) is not
// compared: the bytes it touches are not its span. Accesses
// made in lock and start epochs are concurrentEpochFindings', those
// before a window's first fence are not compared (an MPI_ERR_RMA_SYNC
// reports them). Then each rank's written origin
// buffers (originFindings).
func rmaFindings(ranks []*rankData, siteText siteTextFunc) []verdict.Finding {
	units := map[winKey]int64{}
	made := map[int32]windowMade{}
	for r, rd := range ranks {
		if rd == nil {
			continue
		}
		for i := range rd.seg.recs {
			if p := &rd.seg.recs[i]; p.Type == recRMA && makesWindow(p.Call) {
				units[winKey{r, p.Comm}] = p.Count
				if _, ok := made[p.Comm]; !ok {
					made[p.Comm] = windowMade{r, p}
				}
			}
		}
	}
	if len(units) == 0 {
		return nil
	}
	var fs []verdict.Finding
	fenced := fencedCallsOf(ranks)
	for r, rd := range ranks {
		if rd != nil {
			fs = append(fs, originFindings(r, rd, siteText)...)
			fs = append(fs, mixedEpochFindings(r, rd, siteText, fenced)...)
		}
	}
	type epochKey struct {
		win, target, epoch int32
	}
	epochs := map[epochKey][]rmaAccess{}
	for r, rd := range ranks {
		if rd == nil {
			continue
		}
		for i := range rd.seg.recs {
			p := &rd.seg.recs[i]
			if p.Type != recRMA || !accessCall(p.Call) || p.Flag || p.Index <= 0 || p.Bytes <= 0 || p.Err != 0 {
				continue
			}
			unit, ok := units[winKey{int(p.Peer), p.Comm}]
			if !ok || unit <= 0 {
				continue
			}
			lo := p.Count*unit + p.SCount
			k := epochKey{p.Comm, p.Peer, p.Index}
			epochs[k] = append(epochs[k], rmaAccess{rank: r, rec: p, idx: i, lo: lo, hi: lo + p.Bytes})
		}
	}
	for _, a := range ownWindowAccesses(ranks, false) {
		k := epochKey{a.rec.Comm, int32(a.rank), a.rec.Index}
		epochs[k] = append(epochs[k], a)
	}
	keys := make([]epochKey, 0, len(epochs))
	for k := range epochs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b epochKey) int {
		return cmp.Or(cmp.Compare(a.win, b.win), cmp.Compare(a.target, b.target), cmp.Compare(a.epoch, b.epoch))
	})
	for _, k := range keys {
		acc := epochs[k]
		// By first byte, then origin and its record order (stable): the
		// first pair found does not depend on the map's order.
		slices.SortStableFunc(acc, func(a, b rmaAccess) int {
			return cmp.Or(cmp.Compare(a.lo, b.lo), cmp.Compare(a.rank, b.rank))
		})
		if i, j, why, ok := firstConflict(acc); ok {
			epoch := fmt.Sprintf("in one fence epoch (between the window's MPI_Win_fence calls %d and %d)", k.epoch, k.epoch+1)
			fs = append(fs, rmaFinding(ranks, siteText, &acc[i], &acc[j], why, made[k.win], epoch))
		}
	}
	return append(fs, concurrentEpochFindings(ranks, siteText, units, made)...)
}

// firstConflict returns the first pair of acc (sorted by first byte) that
// conflicts (rmaConflict), in the order of a scan of each access against
// the later ones that overlap it: its indexes and why. Accesses alike (one
// origin, call, site, bytes, op and element type: a loop's accumulates to
// one location) conflict alike with every other, so each kind is scanned
// once, and against its own second member: a fence epoch of ten thousand
// accumulates to one element is ten thousand steps, not fifty million.
// The pair found is the one that scanning every access would find.
func firstConflict(acc []rmaAccess) (int, int, string, bool) {
	type alike struct {
		rank         int
		lo, hi       int64
		local        string
		call, dtype  uint8
		op, elem     int32
		module, site uint32
		pc           uint64
	}
	first := make(map[alike]int, len(acc))
	second := map[int]int{} // a kind's first access: its second
	reps := make([]int, 0, len(acc))
	for i := range acc {
		a := &acc[i]
		k := alike{a.rank, a.lo, a.hi, a.local, a.rec.Call, a.rec.Dtype, a.rec.Tag, a.rec.StatTag, a.rec.Module, a.rec.Site, a.rec.PC}
		f, ok := first[k]
		if !ok {
			first[k] = i
			reps = append(reps, i)
			continue
		}
		if _, ok := second[f]; !ok {
			second[f] = i
		}
	}
	try := func(i, j int) (string, bool) {
		if acc[i].local != "" && acc[j].local != "" {
			return "", false // one rank's own buffers: originFindings' (rmaOverlap)
		}
		return rmaConflict(&acc[i], &acc[j])
	}
	for n, i := range reps {
		twin, hasTwin := second[i]
		for _, j := range reps[n+1:] {
			if acc[j].lo >= acc[i].hi {
				break
			}
			if hasTwin && twin < j {
				if why, ok := try(i, twin); ok {
					return i, twin, why, true
				}
				hasTwin = false
			}
			if why, ok := try(i, j); ok {
				return i, j, why, true
			}
		}
		if hasTwin {
			if why, ok := try(i, twin); ok {
				return i, twin, why, true
			}
		}
	}
	return 0, 0, "", false
}

// ownWindowAccesses are the origin's own accesses to its window memory
// that its one-sided calls make: a Put's (or an accumulate's) origin buffer
// that lies in the origin's part of the window the call accesses is read by
// the library, a Get's origin buffer or a fetch's result buffer there is
// written, while the epoch is open, as a remote access of those bytes would
// be. So each is compared as an access of the origin's own window bytes in
// the call's epoch (MPI-3.1 sec. 11.7: a location a put or an accumulate
// updates must not be accessed by any other operation of the epoch, nor a
// location a get's buffer lands in updated by one): a Get into its own
// window's bytes that another rank Puts to conflicts. Those of fence
// epochs (locked false) go with the fence epoch's accesses; those of lock
// and start epochs (locked) with shared lock epochs' (a lock the origin
// holds on another rank's window does not protect its own memory). Only
// the window the call accesses; a window whose memory the shim does not
// know (MPI_Win_create_dynamic) has none.
func ownWindowAccesses(ranks []*rankData, locked bool) []rmaAccess {
	type span struct{ lo, hi uint64 }
	var out []rmaAccess
	for r, rd := range ranks {
		if rd == nil {
			continue
		}
		var mem map[int32]span // the rank's windows' memory, by window id
		for i := range rd.seg.recs {
			p := &rd.seg.recs[i]
			if p.Type != recRMA {
				continue
			}
			if makesWindow(p.Call) && p.Addr != 0 && p.Span > 0 {
				if mem == nil {
					mem = map[int32]span{}
				}
				mem[p.Comm] = span{p.Addr, p.Addr + uint64(p.Span)}
				continue
			}
			if !accessCall(p.Call) || p.Flag != locked || !locked && (p.Index <= 0 || p.Op != rmaEpochFence) {
				continue
			}
			w, ok := mem[p.Comm]
			if !ok {
				continue
			}
			for _, b := range []struct {
				addr uint64
				n    int64
				name string
			}{{p.Addr, p.Span, "origin buffer"}, {p.Addr2, p.Span2, "result buffer"}} {
				if b.addr == 0 || b.n <= 0 {
					continue
				}
				lo, hi := max(b.addr, w.lo), min(b.addr+uint64(b.n), w.hi)
				if lo >= hi {
					continue
				}
				out = append(out, rmaAccess{rank: r, rec: p, idx: i, lo: int64(lo - w.lo), hi: int64(hi - w.lo), local: b.name})
			}
		}
	}
	return out
}

// lockedAccess is an access made in a shared lock or a start epoch, with
// the wall time from its call to its completion, on the run's clock: the
// return of the first flush of its target after it (MPI_Win_flush,
// MPI_Win_flush_all), else of its epoch's end (the unlock or complete: the
// access is complete at the origin by then, and at the target before the
// target can order anything after it); ends is the index of that record
// in its rank's records (-1: neither came).
type lockedAccess struct {
	rmaAccess
	from, to int64
	ends     int
}

// concurrentEpochFindings reports conflicting accesses to one target
// made in shared lock epochs (MPI_Win_lock(MPI_LOCK_SHARED),
// MPI_Win_lock_all) or in access epochs of MPI_Win_start: such epochs of
// different origins exclude nothing (the origins of one exposure epoch
// access it together), so two accesses in them that conflict
// (rmaConflict) are concurrent unless something orders them (MPI-3.1 sec.
// 11.7). Two shared lock epochs are ordered when the run's synchronization
// (syncOrder: messages and collectives) put one's end before the other's
// access, whatever the timing: a barrier between them, a message from the
// first origin after its unlock to the second before its lock; an
// MPI_Win_flush of the target after the first access stands for the end.
// Access epochs of MPI_Win_start of two origins are ordered by the
// target's exposure epochs (exposures): concurrent when they accessed the
// same one, ordered when two; a pair with one the records do not match
// (an older trace, a shared lock epoch) is concurrent when both were in
// flight at the same time, each from its call to its completion.
// Accesses of exclusive lock epochs are serialized by the lock and never
// compared; two epochs of one origin are ordered by its own calls. One
// finding per pair of concurrent epochs: its first conflicting pair of
// accesses, in time order.
func concurrentEpochFindings(ranks []*rankData, siteText siteTextFunc, units map[winKey]int64, made map[int32]windowMade) []verdict.Finding {
	type lockKey struct {
		rank int
		ord  uint64
	}
	type epochEnd struct {
		t   int64
		idx int
	}
	ends := map[lockKey]epochEnd{}
	gets := map[lockKey]epochEnd{} // a fetch's request completed, by the access's ordinal
	for r, rd := range ranks {
		if rd == nil {
			continue
		}
		for i := range rd.seg.recs {
			p := &rd.seg.recs[i]
			switch {
			case p.Type == recRMA && p.Op == rmaEpochEnd:
				ends[lockKey{r, p.Req}] = epochEnd{rd.offset + int64(p.T0), i}
			case p.Type == recRMA && p.Op == rmaReqDone:
				gets[lockKey{r, p.Req}] = epochEnd{rd.offset + int64(p.T0), i}
			}
		}
	}
	// The flushes of each rank, in record order.
	type flush struct {
		idx       int
		win, peer int32
		t         int64
	}
	flushes := make([][]flush, len(ranks))
	for r, rd := range ranks {
		if rd == nil {
			continue
		}
		for i := range rd.seg.recs {
			if p := &rd.seg.recs[i]; p.Type == recRMA && p.Op == rmaFlush {
				flushes[r] = append(flushes[r], flush{i, p.Comm, p.Peer, rd.offset + int64(p.T0)})
			}
		}
	}
	// endOf is when rank r's access p (record idx) in its epoch of ordinal
	// ord completed at its target: the first flush of p's target after it,
	// in the epoch, else the epoch's end; an access that fetches by
	// request (MPI_Rget, MPI_Rget_accumulate), the wait or test that
	// completed its request, if that came first. (MPI_Rput's and
	// MPI_Raccumulate's completion is the origin's alone, sec. 11.3.5.)
	endOf := func(r int, ord int32, p *record, idx int) epochEnd {
		end, ok := ends[lockKey{r, uint64(ord)}]
		if !ok {
			end = epochEnd{math.MaxInt64, -1} // never unlocked: in flight until the end
		}
		if got, ok := gets[lockKey{r, p.Req}]; ok && (p.Call == callRget || p.Call == callRgetAccumulate) && got.idx > idx && (end.idx < 0 || got.idx < end.idx) {
			end = got
		}
		fs := flushes[r]
		k, _ := slices.BinarySearchFunc(fs, idx, func(f flush, i int) int { return cmp.Compare(f.idx, i) })
		for ; k < len(fs) && (end.idx < 0 || fs[k].idx < end.idx); k++ {
			if f := fs[k]; f.win == p.Comm && (f.peer < 0 || f.peer == p.Peer) {
				return epochEnd{f.t, f.idx}
			}
		}
		return end
	}
	type targetKey struct{ win, target int32 }
	byTarget := map[targetKey][]lockedAccess{}
	for r, rd := range ranks {
		if rd == nil {
			continue
		}
		for i := range rd.seg.recs {
			p := &rd.seg.recs[i]
			if p.Type != recRMA || !accessCall(p.Call) || (p.Op != rmaEpochShared && p.Op != rmaEpochStart) || p.Bytes <= 0 || p.Err != 0 {
				continue
			}
			unit, ok := units[winKey{int(p.Peer), p.Comm}]
			if !ok || unit <= 0 {
				continue
			}
			end := endOf(r, p.Source, p, i)
			lo := p.Count*unit + p.SCount
			k := targetKey{p.Comm, p.Peer}
			byTarget[k] = append(byTarget[k], lockedAccess{rmaAccess{rank: r, rec: p, idx: i, lo: lo, hi: lo + p.Bytes}, rd.offset + int64(p.T0), end.t, end.idx})
		}
	}
	// The origins' buffers in their own windows (ownWindowAccesses), with
	// their epochs, as shared epochs' accesses of their own window.
	for _, a := range ownWindowAccesses(ranks, true) {
		rd, end := ranks[a.rank], endOf(a.rank, a.rec.Source, a.rec, a.idx)
		k := targetKey{a.rec.Comm, int32(a.rank)}
		byTarget[k] = append(byTarget[k], lockedAccess{a, rd.offset + int64(a.rec.T0), end.t, end.idx})
	}
	keys := make([]targetKey, 0, len(byTarget))
	for k := range byTarget {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b targetKey) int { return cmp.Or(cmp.Compare(a.win, b.win), cmp.Compare(a.target, b.target)) })
	// The synchronization's order, made when a pair of shared lock epochs
	// that did not overlap in time asks for it.
	var order *syncOrder
	ordered := func(a, b *lockedAccess) bool { // a's epoch ended before b's access
		if order == nil {
			order = newSyncOrder(ranks, func(r int, p *record) bool {
				return p.Type == recRMA && (p.Op == rmaEpochEnd || p.Op == rmaFlush || p.Op == rmaReqDone || accessCall(p.Call) && p.Flag)
			})
		}
		return a.ends >= 0 && order.before(recRef{a.rank, a.ends}, recRef{b.rank, b.idx})
	}
	// Which exposure epoch of its target each start epoch accessed, made
	// when a pair of start epochs asks for it.
	var exposed map[startEpoch]int
	// sameExposure says whether two accesses of start epochs of different
	// origins to target k accessed one exposure epoch of it (known: both
	// epochs were matched to the target's posts).
	sameExposure := func(k targetKey, a, b *lockedAccess) (same, known bool) {
		if a.rec.Op != rmaEpochStart || b.rec.Op != rmaEpochStart || a.local != "" || b.local != "" || a.rank == b.rank {
			return false, false
		}
		if exposed == nil {
			exposed = exposures(ranks)
		}
		ea, okA := exposed[startEpoch{a.rank, a.rec.Source, k.win, int(k.target)}]
		eb, okB := exposed[startEpoch{b.rank, b.rec.Source, k.win, int(k.target)}]
		return ea == eb, okA && okB
	}
	var fs []verdict.Finding
	for _, k := range keys {
		acc := byTarget[k]
		slices.SortStableFunc(acc, func(a, b lockedAccess) int {
			return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.rank, b.rank))
		})
		type epoch struct {
			rank int
			ord  int32
		}
		seen := map[[2]epoch]bool{}
		// (Past maxOrderedPairs accesses of one target, only those in flight
		// together are compared: the pairs grow as the square.)
		byOrder := len(acc) <= maxOrderedPairs
		for i := range acc {
			a := &acc[i]
			for j := i + 1; j < len(acc) && (byOrder || acc[j].from < a.to); j++ {
				b := &acc[j]
				if a.rank == b.rank && a.rec.Source != b.rec.Source {
					continue // two epochs of one origin: its own calls order them
				}
				pair := [2]epoch{{a.rank, a.rec.Source}, {b.rank, b.rec.Source}}
				if a.hi <= b.lo || b.hi <= a.lo || seen[pair] {
					continue
				}
				why, ok := rmaConflict(&a.rmaAccess, &b.rmaAccess)
				if !ok {
					continue
				}
				words := epochsWords(a.rec.Op, b.rec.Op)
				if a.local != "" && b.local != "" {
					continue // one rank's own buffers: originFindings' (rmaOverlap)
				}
				if same, known := sameExposure(k, a, b); known {
					// The target's exposure epochs order them, not the timing.
					if !same {
						continue
					}
					words = "in access epochs (MPI_Win_start to MPI_Win_complete) of one exposure epoch of the target (MPI_Win_post to MPI_Win_wait)"
				} else if b.from >= a.to { // not in flight together
					shared := a.sharedLike() && b.sharedLike()
					if !shared || a.rank == b.rank || ordered(a, b) || ordered(b, a) {
						continue
					}
					words = "in shared lock epochs (MPI_LOCK_SHARED or MPI_Win_lock_all) that no synchronization orders (no message or collective call between the one's end and the other's access)"
				}
				seen[pair] = true
				fs = append(fs, rmaFinding(ranks, siteText, &a.rmaAccess, &b.rmaAccess, why, made[k.win], words))
			}
		}
	}
	return fs
}

// startEpoch names an origin's access epoch of MPI_Win_start on one of its
// targets: the origin's world rank, the epoch's ordinal (its accesses'
// Source), the window and the target's world rank.
type startEpoch struct {
	origin int
	ord    int32
	win    int32
	target int
}

// exposures matches each origin's access epochs (MPI_Win_start) with its
// targets' exposure epochs (MPI_Win_post), from their rmaGroup records:
// the m-th start of an origin whose group holds a target matches the m-th
// post of that target whose group holds the origin (MPI-3.1 sec. 11.5.2:
// a start waits for the matching post, in order). It returns, for each
// matched epoch, the index of the target's post among its posts of the
// window. Origins matched to one post access the window together; to two,
// in turn (the target's MPI_Win_wait ends one before its next post). A
// trace of an older shim has no such records: an empty map.
func exposures(ranks []*rankData) map[startEpoch]int {
	type side struct {
		rank, win int32
		peer      int
	}
	posts := map[side][]int{}    // (target, win, origin) -> the target's post indexes naming origin
	starts := map[side][]int32{} // (origin, win, target) -> the origin's start ordinals naming target
	for r, rd := range ranks {
		if rd == nil {
			continue
		}
		nposts := map[int32]int{}
		for i := range rd.seg.recs {
			p := &rd.seg.recs[i]
			if p.Type != recRMA || p.Op != rmaGroup {
				continue
			}
			for _, w := range p.Reqs {
				peer := int(int64(w))
				k := side{int32(r), p.Comm, peer}
				switch p.Call {
				case callWinPost:
					posts[k] = append(posts[k], nposts[p.Comm])
				case callWinStart:
					starts[k] = append(starts[k], int32(p.Req))
				}
			}
			if p.Call == callWinPost {
				nposts[p.Comm]++
			}
		}
	}
	out := map[startEpoch]int{}
	for k, ords := range starts {
		ps := posts[side{int32(k.peer), k.win, int(k.rank)}]
		for m, ord := range ords {
			if m < len(ps) {
				out[startEpoch{int(k.rank), ord, k.win, k.peer}] = ps[m]
			}
		}
	}
	return out
}

// sharedLike reports whether the access excludes no other origin's: one of
// a shared lock epoch, or an origin's buffer in its own window (whatever
// lock it holds on another rank's window).
func (a *lockedAccess) sharedLike() bool { return a.rec.Op == rmaEpochShared || a.local != "" }

// maxOrderedPairs bounds the accesses of one target whose every pair
// concurrentEpochFindings compares.
const maxOrderedPairs = 4096

// rmaRef is the finding's reference to rank r's record p, an access (its
// target in Peer) or a synchronization call (peer trace.NoRank).
func rmaRef(r int, rd *rankData, siteText siteTextFunc, p *record, peer int) verdict.OpRef {
	call := callName(uint32(p.Call))
	return verdict.OpRef{Rank: r, Op: call, Peer: peer, Tag: -1, Site: siteText(rd, p.Module, p.PC, p.Site), Call: call, Untraced: true}
}

// callAt is "MPI_Put at x.c:12", or the call alone without a site.
func callAt(o verdict.OpRef) string {
	if o.Site == "" {
		return o.Call
	}
	return o.Call + " at " + o.Site
}

// epochsWords says which epochs two concurrent accesses were made in.
func epochsWords(a, b uint8) string {
	switch {
	case a == rmaEpochShared && b == rmaEpochShared:
		return "in shared lock epochs (MPI_LOCK_SHARED or MPI_Win_lock_all) open at the same time"
	case a == rmaEpochStart && b == rmaEpochStart:
		return "in access epochs (MPI_Win_start to MPI_Win_complete) open at the same time"
	}
	return "in a shared lock epoch and an access epoch of MPI_Win_start open at the same time"
}

// originFindings reports rank r's one-sided accesses whose origin buffer
// the program wrote before the call that completed them at the origin
// (an RMA record of that synchronization call naming the access's
// ordinal: see the shim), as in-flight mutations: MPI-3.1 sec. 11.3, "the
// origin buffer must not be updated until the operation completes", and
// the target may get either data.
func originFindings(r int, rd *rankData, siteText siteTextFunc) []verdict.Finding {
	var byOrd map[uint64]*record
	var fs []verdict.Finding
	// One finding per pair of sites and kind of record: a loop of a
	// million accesses, each written alike, is one bug.
	seen := sitePairs{}
	once := func(op uint8, a, b *record) bool { return seen.first(op, pcSite(a), pcSite(b)) }
	for i := range rd.seg.recs {
		p := &rd.seg.recs[i]
		if p.Type != recRMA || makesWindow(p.Call) || p.Op == rmaEpochEnd || p.Op == rmaFlush || p.Op == rmaGroup || p.Op == rmaReqDone {
			continue
		}
		if p.Op == rmaOverlap {
			if a, b := byOrd[uint64(p.Source)], byOrd[p.Req]; a != nil && b != nil && once(p.Op, a, b) {
				fs = append(fs, overlapFinding(r, rd, siteText, a, b, p.Bytes))
			}
			continue
		}
		if accessCall(p.Call) {
			if byOrd == nil {
				byOrd = map[uint64]*record{}
			}
			byOrd[p.Req] = p
			continue
		}
		a, ok := byOrd[p.Req]
		if !ok || !once(p.Op, a, p) {
			continue
		}
		if p.Op == rmaWritten {
			fs = append(fs, getWrittenFinding(r, rd, siteText, a, p))
			continue
		}
		ra, rs := rmaRef(r, rd, siteText, a, int(a.Peer)), rmaRef(r, rd, siteText, p, trace.NoRank)
		msg := fmt.Sprintf("rank %d: the origin buffer of %s to rank %d was written before %s completed it: the target may get either data (MPI-3.1 sec. 11.3: the origin buffer must not be updated until the operation completes)",
			r, callAt(ra), a.Peer, callAt(rs))
		f := verdict.New(verdict.InFlightMutation, []int{r}, msg, ra, rs)
		f.Hint = "do not write a Put's or an Accumulate's origin buffer until the MPI_Win_fence, MPI_Win_unlock, MPI_Win_complete or flush that completes it returned"
		if requestAccess(a.Call) {
			f.Hint = "do not write the origin buffer of " + callName(uint32(a.Call)) + " until the wait or test that completes its request (or the MPI_Win_unlock or flush that ends the access) returned"
		}
		fs = append(fs, f)
	}
	return fs
}

// fenceInterval is what the RMA calls on a window between two of its
// fences were: which ranks called (its origins) and which were accessed by
// another rank (its targets), by window, fences before (Index) and rank.
type fenceInterval struct{ win, index, rank int32 }

// fencedCalls indexes the one-sided accesses of every rank by the fence
// interval they were made in: made[k] says rank k.rank made one between
// fences k.index and k.index+1 of window k.win; accessed[k] that another
// rank accessed k.rank's window there (accessed[{win, index, -1}]: any).
type fencedCalls struct{ made, accessed map[fenceInterval]bool }

func fencedCallsOf(ranks []*rankData) fencedCalls {
	f := fencedCalls{map[fenceInterval]bool{}, map[fenceInterval]bool{}}
	for r, rd := range ranks {
		if rd == nil {
			continue
		}
		for i := range rd.seg.recs {
			p := &rd.seg.recs[i]
			if p.Type != recRMA || !accessCall(p.Call) {
				continue
			}
			f.made[fenceInterval{p.Comm, p.Index, int32(r)}] = true
			if int(p.Peer) != r {
				f.accessed[fenceInterval{p.Comm, p.Index, p.Peer}] = true
				f.accessed[fenceInterval{p.Comm, p.Index, -1}] = true
			}
		}
	}
	return f
}

// mixedEpochFindings reports rank r's lock epochs opened inside a fence
// epoch of the same window (its rmaMixed records): MPI_Win_lock or
// MPI_Win_lock_all between two MPI_Win_fence calls, the first not asserting
// MPI_MODE_NOSUCCEED, the second not MPI_MODE_NOPRECEDE, that made an
// epoch. A fence starts an access epoch "if it is followed by another
// fence call and by RMA communication calls issued between these two fence
// calls", and an exposure epoch if "the local window is the target of RMA
// accesses issued by remote processes in between" (MPI-3.1 sec. 11.5.1);
// "it is erroneous to have a window locked and exposed (in an exposure
// epoch) concurrently" (sec. 11.5.3), and an origin's access epochs are
// disjoint (sec. 11.5). So the lock is reported when rank r made an RMA
// call between the two fences (its lock epoch's own calls count: they are
// issued between them), or another rank accessed the window it locked
// there; between fences with no RMA call there is no epoch (MPICH's
// atomic_get locks its own window, between fences, for local stores).
// Open MPI runs such a program.
func mixedEpochFindings(r int, rd *rankData, siteText siteTextFunc, fenced fencedCalls) []verdict.Finding {
	var fs []verdict.Finding
	for i := range rd.seg.recs {
		p := &rd.seg.recs[i]
		if p.Type != recRMA || p.Op != rmaMixed {
			continue
		}
		if !fenced.made[fenceInterval{p.Comm, p.Index, int32(r)}] && !fenced.accessed[fenceInterval{p.Comm, p.Index, p.Peer}] {
			continue // no RMA call between the fences: they made no epoch
		}
		ref := rmaRef(r, rd, siteText, p, trace.NoRank)
		msg := fmt.Sprintf("rank %d: %s opened a lock epoch between the window's MPI_Win_fence calls %d and %d, inside their fence epoch: "+
			"active and passive target synchronization of one window do not mix (MPI-3.1 sec. 11.5.3: it is erroneous to have a window locked and exposed concurrently)",
			r, callAt(ref), p.Index, p.Index+1)
		f := verdict.New(verdict.InvalidCall, []int{r}, msg, ref)
		f.Hint = "end the fence epoch before locking: give the fence before the lock MPI_MODE_NOSUCCEED (and the fence after it MPI_MODE_NOPRECEDE), or synchronize this window with fences or with locks, not both"
		fs = append(fs, f)
	}
	return fs
}

// overlapFinding words two pending one-sided accesses of rank r, a then b,
// whose buffers the library writes (a Get's origin buffer, a fetching
// accumulate's result buffer) share n bytes: both write them, in an order
// MPI does not define, as two pending receives into one buffer (MPI-3.1
// sec. 11.3: the buffer is not to be accessed until the operation
// completes; sec. 11.7).
func overlapFinding(r int, rd *rankData, siteText siteTextFunc, a, b *record, n int64) verdict.Finding {
	ra, rb := rmaRef(r, rd, siteText, a, int(a.Peer)), rmaRef(r, rd, siteText, b, int(b.Peer))
	msg := fmt.Sprintf("rank %d: %s and %s, both pending, write overlapping buffers (%d bytes in common): which data they end with is undefined (MPI-3.1 sec. 11.3: a get's buffer is the library's until the access completes)",
		r, callAt(ra), callAt(rb), n)
	f := verdict.New(verdict.BufferOverlap, []int{r}, msg, ra, rb)
	f.Hint = "give each pending get its own buffer, or complete the first (MPI_Win_fence, MPI_Win_unlock, a flush) before the second"
	return f
}

// getWrittenFinding words a Get's origin buffer, or an accumulate's result
// buffer (w.Flag), written (the write record w) before the access a
// completed: a receive buffer written while its receive is pending, in
// one-sided terms (MPI-3.1 sec. 11.3: the origin buffer of a get, and the
// result buffer of a fetching accumulate, must not be accessed until the
// operation completes).
func getWrittenFinding(r int, rd *rankData, siteText siteTextFunc, a, w *record) verdict.Finding {
	ra, rs := rmaRef(r, rd, siteText, a, int(a.Peer)), rmaRef(r, rd, siteText, w, trace.NoRank)
	buffer := "origin buffer" // a Get's
	if w.Flag {
		buffer = "result buffer" // an accumulate's that fetches (sec. 11.3.4)
	}
	msg := fmt.Sprintf("rank %d: the program wrote the %s of %s from rank %d before the access completed (seen at %s): the write or the data got is lost (MPI-3.1 sec. 11.3: the buffer must not be accessed until the operation completes)",
		r, buffer, callAt(ra), a.Peer, callAt(rs))
	f := verdict.New(verdict.RecvBufferWrite, []int{r}, msg, ra, rs)
	f.Hint = "do not touch the " + buffer + " of " + callName(uint32(a.Call)) + " until the MPI_Win_fence, MPI_Win_unlock, MPI_Win_complete or flush that completes it returned"
	if requestAccess(a.Call) {
		f.Hint = "do not touch the " + buffer + " of " + callName(uint32(a.Call)) + " until the wait or test that completes its request (or the MPI_Win_unlock or flush that ends the access) returned"
	}
	return f
}

// rmaFinding words a conflict of a and b in the epoch (or epochs) epoch says.
func rmaFinding(ranks []*rankData, siteText siteTextFunc, a, b *rmaAccess, why string, m windowMade, epoch string) verdict.Finding {
	if b.rank < a.rank {
		a, b = b, a // (the lower rank first, whichever came first)
	}
	ra := rmaRef(a.rank, ranks[a.rank], siteText, a.rec, int(a.rec.Peer))
	rb := rmaRef(b.rank, ranks[b.rank], siteText, b.rec, int(b.rec.Peer))
	lo, hi := max(a.lo, b.lo), min(a.hi, b.hi)
	target := a.rec.Peer
	if a.local != "" {
		target = int32(a.rank) // its own window
	}
	window := fmt.Sprintf("rank %d's window", target)
	if m.rec != nil {
		if s := siteText(ranks[m.rank], m.rec.Module, m.rec.PC, m.rec.Site); s != "" {
			window += fmt.Sprintf(" (made by %s at %s)", callName(uint32(m.rec.Call)), s)
		}
	}
	what := func(x *rmaAccess, ref verdict.OpRef) string {
		if x.local == "" {
			return callAt(ref)
		}
		return fmt.Sprintf("%s of %s (in its own window)", x.local, callAt(ref))
	}
	bytes := fmt.Sprintf("bytes %d..%d", lo, hi-1)
	if m.rec != nil && m.rec.Call == callWinCreateDynamic && a.local == "" {
		// A dynamic window's displacements are addresses (MPI_Get_address).
		bytes = fmt.Sprintf("the bytes at addresses %#x..%#x", lo, hi-1)
	}
	msg := fmt.Sprintf("rank %d's %s and rank %d's %s touch %s of %s %s, and %s: conflicting accesses, the outcome is undefined (MPI-3.1 sec. 11.7)",
		a.rank, what(a, ra), b.rank, what(b, rb), bytes, window, epoch, why)
	rs := []int{a.rank}
	if b.rank != a.rank {
		rs = append(rs, b.rank)
		slices.Sort(rs)
	}
	return verdict.New(verdict.RMAConflict, rs, msg, ra, rb)
}
