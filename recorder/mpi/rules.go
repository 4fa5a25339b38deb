package mpi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// Finding kinds the merge reports itself (verdict.BufferOverlap,
// verdict.RequestLeak, verdict.ResourceLeak): rules that need what only the
// shim saw (buffer addresses, the lifetimes of persistent requests and of
// the objects a program makes), which a trace does not hold.
//
// buffer-overlap: two pending operations of one rank whose buffers share
// bytes, one of them a receive (it writes them), or an MPI_Sendrecv whose
// send and receive buffers overlap. The MPI standard forbids both (a pending
// receive's buffer belongs to the library; the outcome is undefined). Named
// for what is wrong, the buffers, not for an effect that may not show.
// request-leak: a persistent request never freed before MPI_Finalize.

// siteTextFunc renders the call site of a record as file:line.
type siteTextFunc func(rd *rankData, module uint32, pc uint64, py uint32) string

func isInit(call uint8) bool { return call >= callSendInit && call <= callRecvInit }

// overlapFindings finds, in rank r's records, message ops whose dense
// buffers overlap a buffer of an op of the same rank still pending (posted,
// not yet completed), one of them a receive: one finding per pair of sites.
func overlapFindings(r int, rd *rankData, siteText siteTextFunc) []verdict.Finding {
	type pend struct {
		i      int // post index
		req    uint64
		addr   uint64
		n      int64
		writes bool
	}
	var pending []pend
	var fs []verdict.Finding
	seen := map[[2]int]bool{}
	recs := rd.seg.recs
	for _, rec := range recs {
		switch rec.Type {
		case recDone:
			i := int(rec.Seq)
			pending = slices.DeleteFunc(pending, func(p pend) bool { return p.i == i })
		case recPost:
			i := int(rec.Seq)
			if rd.skip[i] {
				continue
			}
			op := rd.op[i]
			if op == trace.OpFree {
				// The op goes on, unseen: whatever it still does to its
				// buffer, the program cannot know when; not an overlap rule.
				pending = slices.DeleteFunc(pending, func(p pend) bool { return slices.Contains(rec.Reqs, p.req) })
				continue
			}
			if rec.Span <= 0 || !(op.IsSend() || op.IsRecv()) {
				continue
			}
			cur := pend{i: i, req: rec.Req, addr: rec.Addr, n: rec.Span, writes: op.IsRecv()}
			for _, p := range pending {
				lo, hi := max(p.addr, cur.addr), min(p.addr+uint64(p.n), cur.addr+uint64(cur.n))
				if lo >= hi || !(p.writes || cur.writes) {
					continue
				}
				a, b := &recs[rd.posts[p.i]], &rec
				key := [2]int{int(a.PC), int(b.PC)}
				if seen[key] {
					continue
				}
				seen[key] = true
				sa, sb := siteText(rd, a.Module, a.PC, a.Site), siteText(rd, b.Module, b.PC, b.Site)
				fs = append(fs, verdict.New(verdict.BufferOverlap, []int{r},
					fmt.Sprintf("rank %d: %s at %s (%s, pending) and %s at %s (%s) use overlapping buffers (%d bytes in common)",
						r, callName(uint32(a.Call)), siteOr(sa), access(p.writes), callName(uint32(b.Call)), siteOr(sb), access(cur.writes), hi-lo),
					callRef(r, rd, a, sa), callRef(r, rd, b, sb)))
			}
			pending = append(pending, cur)
		}
	}
	return fs
}

// overrunFindings finds rank r's calls whose buffer runs past the end of
// the program variable it points into: MPI-3.1 sec. 3.2.2, "the send
// buffer ... consists of count successive entries of the type indicated by
// datatype, starting with the entry at address buf", sec. 3.2.4, "the
// receive buffer consists of the storage containing count consecutive
// elements of the type specified by datatype, starting at address buf" (a
// receive's is checked as declared, whatever arrived: what the library may
// write). Each side of a collective is checked where it is significant
// (the shim records only those). The variable comes from the program's
// debug info (variableAt), or the heap block the buffer starts, whose size
// the shim noted at its malloc, calloc or realloc; a buffer in no variable
// or block it knows (inside a block, a caller's frame, code without debug
// info) is not checked. A persistent request's start is not checked: its
// buffer is its init's, made by a function whose frame may be gone.
// One-sided calls are checked too, not trace ops, named by their call: an
// access's origin buffer (sec. 11.3: origin_count entries of the origin
// datatype), which a get writes, and an accumulate's result buffer; and
// the memory an MPI_Win_create exposes (sec. 11.2.1: size bytes from base).
func overrunFindings(r int, rd *rankData, sites *siteResolver, siteText siteTextFunc) []verdict.Finding {
	// How a call uses a buffer: its verb, preposition, and what it does
	// past the variable's end.
	type use struct{ verb, prep, past string }
	reads := use{"sends", "from", "reads"}
	writes := use{"receives", "into", "writes"}
	exposes := use{"exposes", "at", "runs"}
	type side struct {
		addr  uint64
		n     int64
		heap  int64 // the size of the heap block it starts (0: none known)
		ctype cType // what its datatype stands for in C (0: not compared)
		use   use
	}
	var fs []verdict.Finding
	said := map[string]bool{} // (a call in a loop says it once)
	add := func(f verdict.Finding) {
		if !said[f.Message] {
			said[f.Message] = true
			fs = append(fs, f)
		}
	}
	for i := range rd.seg.recs {
		rec := &rd.seg.recs[i]
		if rec.Frame == 0 || rec.PC == 0 {
			continue
		}
		sides := []side{{rec.Addr, rec.Span, rec.Heap, rec.CType, reads}, {rec.Addr2, rec.Span2, rec.Heap2, rec.CType2, writes}}
		switch {
		case rec.Type == recPost && rec.Call != callStart && rec.Call != callStartall:
			seq := int(rec.Seq)
			if seq >= len(rd.op) || rd.skip[seq] {
				continue
			}
			if rd.op[seq].IsRecv() {
				sides[0].use = writes
			}
		case rec.Type == recRMA && accessCall(rec.Call):
			if rec.Call == callGet || rec.Call == callRget {
				sides[0].use = writes
			}
		case rec.Type == recRMA && rec.Call == callWinCreate:
			sides[0].use = exposes
		default:
			continue
		}
		m, ok := rd.modules[rec.Module]
		if !ok {
			continue
		}
		for _, sd := range sides {
			if sd.addr == 0 || sd.n <= 0 {
				continue
			}
			v, ok := sites.variableAt(m.Path, rec.PC-m.PC, m.PC, rec.Frame, sd.addr)
			if !ok && sd.heap > 0 {
				v, ok = variable{lo: sd.addr, hi: sd.addr + uint64(sd.heap)}, true
			}
			end := sd.addr + uint64(sd.n)
			overrun := ok && end > v.hi
			// It fits: its elements' type, then (an overrun's datatype is
			// said by its overrun).
			mistyped := ok && !overrun && v.name != "" && !sd.ctype.matches(v.elem)
			if !overrun && !mistyped {
				continue
			}
			// A finding: its call's site and reference (a one-sided call
			// is not a trace op: named by its call, rmaRef).
			site := siteText(rd, rec.Module, rec.PC, rec.Site)
			ref := callRef(r, rd, rec, site)
			switch {
			case rec.Type == recRMA && rec.Call == callWinCreate:
				ref = rmaRef(r, rd, siteText, rec, trace.NoRank)
			case rec.Type == recRMA:
				ref = rmaRef(r, rd, siteText, rec, int(rec.Peer))
			}
			if mistyped {
				add(verdict.New(verdict.HostTypeMismatch, []int{r},
					fmt.Sprintf("rank %d: %s at %s %s %s %s (%s, %s) as %s: the datatype does not name the type of the variable's elements (%s)",
						r, callName(uint32(rec.Call)), siteOr(site), sd.use.verb, sd.use.prep, v.name, v.typ, v.where(), sd.ctype, v.elem),
					ref))
				continue
			}
			verb, prep, past := sd.use.verb, sd.use.prep, sd.use.past
			what := fmt.Sprintf("a heap block of %d bytes (malloc, calloc or realloc)", v.hi-v.lo)
			if v.name != "" {
				what = fmt.Sprintf("%s (%s, %d bytes, %s)", v.name, v.typ, v.hi-v.lo, v.where())
			}
			f := verdict.New(verdict.BufferOverrun, []int{r},
				fmt.Sprintf("rank %d: %s at %s %s %d bytes %s %s: it %s %d bytes past its end",
					r, callName(uint32(rec.Call)), siteOr(site), verb, sd.n, prep, what, past, end-v.hi),
				ref)
			if sd.use == exposes {
				f.Hint = "pass the window's memory itself as base (the array, not the address of a pointer to it), and a size no larger than that memory"
			}
			add(f)
		}
	}
	return fs
}

// callRef names a recorded call (a post record of rank r) in a finding,
// by its Seq in the trace, the number show and replay's findings use.
func callRef(r int, rd *rankData, rec *record, site string) verdict.OpRef {
	name := callName(uint32(rec.Call))
	return verdict.OpRef{Rank: r, Seq: rd.traceSeq(int(rec.Seq)), Op: name, Peer: int(rec.Peer), Tag: int(rec.Tag), Site: site, Call: name}
}

// traceSeq is the trace Seq of the shim's post number i. A post the trace
// leaves out (a wait on null requests only) has none: it is named by the
// trace op before it, the last one the rank made (0 if none).
func (rd *rankData) traceSeq(i int) uint64 {
	for ; i >= 0; i-- {
		if i < len(rd.skip) && !rd.skip[i] {
			return rd.tseq[i]
		}
	}
	return 0
}

func access(writes bool) string {
	if writes {
		return "receives into it"
	}
	return "sends from it"
}

func siteOr(s string) string {
	if s == "" {
		return "an unknown site"
	}
	return s
}

// leakFindings names rank r's persistent requests that were never freed
// (the rank reached MPI_Finalize): one finding per request.
func leakFindings(r int, rd *rankData, siteText siteTextFunc) []verdict.Finding {
	freed := map[uint64]bool{}
	for _, rec := range rd.seg.recs {
		if rec.Type == recPost && rec.Call == callRequestFree && rec.Req != 0 {
			freed[rec.Req] = true
		}
	}
	var fs []verdict.Finding
	for i := range rd.seg.recs {
		rec := &rd.seg.recs[i]
		if rec.Type != recPost || !isInit(rec.Call) || rec.Req == 0 || freed[rec.Req] {
			continue
		}
		site := siteText(rd, rec.Module, rec.PC, rec.Site)
		fs = append(fs, verdict.New(verdict.RequestLeak, []int{r},
			fmt.Sprintf("rank %d: persistent request of %s at %s (peer %d, tag %d) never freed before MPI_Finalize", r, callName(uint32(rec.Call)), siteOr(site), rec.Peer, rec.Tag),
			callRef(r, rd, rec, site)))
	}
	return fs
}

// The kinds of object a rank may leak (resourceLeaks), and their words.
const (
	objComm uint8 = iota
	objWindow
	objType
	objGroup
	objOp
)

var objWords = [...]struct{ what, free string }{
	objComm:   {"communicator", "MPI_Comm_free"},
	objWindow: {"window", "MPI_Win_free"},
	objType:   {"datatype", "MPI_Type_free"},
	objGroup:  {"group", "MPI_Group_free"},
	objOp:     {"reduction op", "MPI_Op_free"},
}

// freedKind is the kind of object a free call frees (ok false: call frees
// none of them).
func freedKind(call uint8) (kind uint8, ok bool) {
	switch call {
	case callCommFree, callCommDisconnect:
		return objComm, true
	case callWinFree:
		return objWindow, true
	case callTypeFree:
		return objType, true
	case callGroupFree:
		return objGroup, true
	case callOpFree:
		return objOp, true
	}
	return 0, false
}

// leakSite is where objects of one kind were made: by call at site.
type leakSite struct {
	kind, call uint8
	site       string
}

// leak is n objects that rank r made at one site and never freed.
type leak struct {
	leakSite
	r, n int
}

// resourceLeaks lists rank r's objects that the program made and never
// freed (the rank reached MPI_Finalize, which does not free objects made
// by MPI calls: MPI-3.1 sec. 8.7), a leak per call site that made them, in
// the order made. A communicator is the program's when an MPI call of its
// made it (a comm record with a call: the world, self, and those made by
// calls the shim does not intercept have none; torch.distributed's process
// groups, which the Python recorder writes as comm records, are not MPI
// objects); a window, when its making was
// recorded (an rma record of such a call); datatypes, groups and reduction
// ops have obj records (the shim writes none for those the MPI library
// makes inside its own calls). Free records (recFree) name the id freed.
func resourceLeaks(r int, rd *rankData, siteText siteTextFunc) []leak {
	type object struct {
		kind uint8
		id   int32
	}
	recs := rd.seg.recs
	live := map[object][]int{} // the records of those made and not freed yet, in order
	for i := range recs {
		rec := &recs[i]
		o, made := object{}, false
		switch {
		case rec.Type == recComm && rec.Call != callNone && !torchCall(int(rec.Call)):
			o, made = object{objComm, rec.Comm}, true
		case rec.Type == recRMA && makesWindow(rec.Call):
			o, made = object{objWindow, rec.Comm}, true
		case rec.Type == recObj && rec.Tag >= 1 && rec.Tag <= 3:
			o, made = object{objType + uint8(rec.Tag-1), rec.Comm}, true
		case rec.Type == recFree:
			if k, ok := freedKind(rec.Call); ok {
				o = object{k, rec.Comm}
				if m := live[o]; len(m) > 0 {
					live[o] = m[1:]
				}
			}
		}
		if made {
			live[o] = append(live[o], i)
		}
	}
	type left struct {
		i    int // its record
		kind uint8
	}
	var unfreed []left
	for o, m := range live {
		for _, i := range m {
			unfreed = append(unfreed, left{i, o.kind})
		}
	}
	// (In the order made: the map's order is random.)
	slices.SortFunc(unfreed, func(a, b left) int { return cmp.Compare(a.i, b.i) })
	var ls []leak
	at := map[leakSite]int{} // a site's index in ls
	for _, m := range unfreed {
		rec := &recs[m.i]
		k := leakSite{m.kind, rec.Call, siteText(rd, rec.Module, rec.PC, rec.Site)}
		if j, ok := at[k]; ok {
			ls[j].n++
			continue
		}
		at[k] = len(ls)
		ls = append(ls, leak{k, r, 1})
	}
	return ls
}

// resourceLeakFindings words the leaks of every rank that finalized: one
// finding per call site, naming each rank that leaked there (a loop
// that every rank runs is one bug, not one a rank).
func resourceLeakFindings(leaks []leak) []verdict.Finding {
	var order []leakSite
	group := map[leakSite][]leak{}
	for _, l := range leaks {
		if _, ok := group[l.leakSite]; !ok {
			order = append(order, l.leakSite)
		}
		group[l.leakSite] = append(group[l.leakSite], l)
	}
	var fs []verdict.Finding
	for _, k := range order {
		g := group[k]
		w := objWords[k.kind]
		call := callName(uint32(k.call))
		var ranks []int
		var ops []verdict.OpRef
		total, same := 0, true
		for _, l := range g {
			ranks = append(ranks, l.r)
			ops = append(ops, verdict.OpRef{Rank: l.r, Op: call, Peer: trace.NoRank, Tag: -1, Site: l.site, Call: call, Untraced: true})
			total += l.n
			same = same && l.n == g[0].n
		}
		who, n, all := verdict.RankList(ranks), g[0].n, ""
		if len(g) > 1 {
			if same {
				who += " each"
			} else {
				n, all = total, " in all"
			}
		}
		objects := "a " + w.what
		if n > 1 {
			objects = fmt.Sprintf("%d %ss%s", n, w.what, all)
		}
		fs = append(fs, verdict.New(verdict.ResourceLeak, ranks,
			fmt.Sprintf("%s never freed %s made by %s at %s (%s) before MPI_Finalize, which does not free objects made by MPI calls (MPI-3.1 sec. 8.7)", who, objects, call, siteOr(k.site), w.free),
			ops...))
	}
	return fs
}

// sitePairs holds the pairs of call sites a rule reported, by kind of
// record: a rule at calls in a loop says each pair once (a million
// findings alike took the merge minutes and gigabytes to format).
type sitePairs map[[3]uint64]bool

// first reports whether kind's pair of sites a, b is new, and notes it.
func (s sitePairs) first(kind uint8, a, b uint64) bool {
	k := [3]uint64{uint64(kind), a, b}
	if s[k] {
		return false
	}
	s[k] = true
	return true
}

// pcSite names r's call site: its pc, and its Python site if any.
func pcSite(r *record) uint64 { return r.PC ^ uint64(r.Site)<<32 }

// recvWriteFindings reports rank r's receive buffers the shim saw written
// while their receive was pending (write records): the buffer changed
// between the return of one MPI call of the rank and the entry of the next,
// when only the program runs (see the shim's "receive buffers written while
// their receive is pending"). recv-buffer-write: one finding per pair of
// sites (the receive, the call that noticed).
func recvWriteFindings(r int, rd *rankData, siteText siteTextFunc) []verdict.Finding {
	var fs []verdict.Finding
	seen := sitePairs{}
	recs := rd.seg.recs
	for i := range recs {
		w := &recs[i]
		if w.Type != recWrite || w.Op != writeProgram || int(w.Seq) >= len(rd.posts) {
			continue
		}
		recv := &recs[rd.posts[w.Seq]]
		if !seen.first(0, pcSite(recv), w.PC) {
			continue
		}
		sr, sw := siteText(rd, recv.Module, recv.PC, recv.Site), siteText(rd, w.Module, w.PC, w.Site)
		at := callName(uint32(w.Call))
		notice := verdict.OpRef{Rank: r, Seq: rd.traceSeq(noticeSeq(recs, i)), Op: at, Peer: trace.NoRank, Tag: -1, Site: sw, Call: at}
		what := fmt.Sprintf("the buffer of %s at %s (from rank %d, tag %d) was written by the program while the receive was pending",
			callName(uint32(recv.Call)), siteOr(sr), recv.Peer, recv.Tag)
		if trace.Op(recv.Op).IsNonblockingCollective() {
			// Its receive side (MPI-3.1 sec. 5.12: not to be accessed
			// until the operation completes).
			what = fmt.Sprintf("the receive buffer of %s at %s was written by the program while the collective was pending",
				callName(uint32(recv.Call)), siteOr(sr))
		}
		fs = append(fs, verdict.New(verdict.RecvBufferWrite, []int{r},
			fmt.Sprintf("rank %d: %s: it changed after the rank's previous MPI call returned and before %s at %s",
				r, what, at, siteOr(sw)),
			callRef(r, rd, recv, sr), notice))
	}
	return fs
}

// releasedFindings reports the buffers of rank r's pending nonblocking
// sends and receives, and the memory of its windows, that the program
// released while the library still owned them (MPI-3.1 sec. 3.7.2: a
// pending operation's buffer until its request completes; a window's
// memory until MPI_Win_free): the shim saw a recorded call made from a
// frame above the stack buffer (the function that held it returned), or
// free() release the heap block it starts (write records of op writeFrame,
// writeFreed; RMA records rmaReleased; see the shim's "buffers released
// while in use"). released-buffer: one finding per pair of sites (the
// post, where it was released or seen).
func releasedFindings(r int, rd *rankData, siteText siteTextFunc) []verdict.Finding {
	var fs []verdict.Finding
	seen := sitePairs{}
	recs := rd.seg.recs
	for i := range recs {
		w := &recs[i]
		var made *record // the post, or the window's making
		switch {
		case w.Type == recWrite && (w.Op == writeFrame || w.Op == writeFreed) && int(w.Seq) < len(rd.posts):
			made = &recs[rd.posts[w.Seq]]
		case w.Type == recRMA && w.Op == rmaReleased:
			made = windowMaking(recs[:i], w.Comm)
		}
		if made == nil {
			continue
		}
		if !seen.first(0, pcSite(made), w.PC) {
			continue
		}
		sm, sw := siteText(rd, made.Module, made.PC, made.Site), siteText(rd, w.Module, w.PC, w.Site)
		var what, until string
		ref := callRef(r, rd, made, sm)
		if w.Type == recRMA {
			what = fmt.Sprintf("the memory of the window %s made at %s", callName(uint32(made.Call)), siteOr(sm))
			until = "the window was freed"
			ref = verdict.OpRef{Rank: r, Op: callName(uint32(made.Call)), Peer: trace.NoRank, Tag: -1, Site: sm, Call: callName(uint32(made.Call)), Untraced: true}
		} else {
			what = fmt.Sprintf("the buffer of %s at %s", callName(uint32(made.Call)), siteOr(sm))
			if trace.Op(made.Op).IsNonblockingCollective() {
				what = fmt.Sprintf("a buffer of %s at %s", callName(uint32(made.Call)), siteOr(sm))
			} else if trace.Op(made.Op).IsSend() {
				what += fmt.Sprintf(" (to rank %d, tag %d)", made.Peer, made.Tag)
			} else {
				what += fmt.Sprintf(" (from rank %d, tag %d)", made.Peer, made.Tag)
			}
			until = "its request completed"
		}
		at := callName(uint32(w.Call))
		var msg string
		var where verdict.OpRef
		if w.Flag {
			msg = fmt.Sprintf("rank %d: %s was freed (at %s) before %s: the library %s when the heap may have given that memory to something else", r, what, siteOr(sw), until, libraryUse(w, made))
			where = verdict.OpRef{Rank: r, Op: "free", Peer: trace.NoRank, Tag: -1, Site: sw, Call: "free", Untraced: true}
		} else {
			msg = fmt.Sprintf("rank %d: %s lay in a stack frame that returned before %s (%s at %s was called from a frame above it): the library %s when later calls' frames may hold other variables there", r, what, until, at, siteOr(sw), libraryUse(w, made))
			where = verdict.OpRef{Rank: r, Op: at, Peer: trace.NoRank, Tag: -1, Site: sw, Call: at, Untraced: true}
		}
		fs = append(fs, verdict.New(verdict.ReleasedBuffer, []int{r}, msg, ref, where))
	}
	return fs
}

// libraryUse says what the library does with released memory.
func libraryUse(w, made *record) string {
	switch {
	case w.Type == recRMA:
		return "exposes it to one-sided accesses"
	case trace.Op(made.Op).IsNonblockingCollective():
		return "reads or writes it for the collective"
	case trace.Op(made.Op).IsSend():
		return "reads it for the send"
	}
	return "writes the message into it"
}

// windowMaking is the record of the making of window id among recs, nil
// if none.
func windowMaking(recs []record, id int32) *record {
	for i := len(recs) - 1; i >= 0; i-- {
		if p := &recs[i]; p.Type == recRMA && p.Comm == id && makesWindow(p.Call) {
			return p
		}
	}
	return nil
}

// noticeSeq is the post (shim number) of the call that wrote write record
// i: the shim checks at a call's entry, which is just before its post
// (Recv, Send...) or just after it (Barrier, the Wait family). -1 if none.
func noticeSeq(recs []record, i int) int {
	w := &recs[i]
	is := func(p *record) bool { return p.Type == recPost && p.Call == w.Call && p.PC == w.PC }
	for j := i - 1; j >= 0 && recs[j].Type != recDone; j-- {
		if recs[j].Type == recPost {
			if is(&recs[j]) {
				return int(recs[j].Seq)
			}
			break
		}
	}
	for j := i + 1; j < len(recs); j++ {
		if recs[j].Type == recPost {
			if is(&recs[j]) {
				return int(recs[j].Seq)
			}
			break
		}
	}
	return -1
}

// sigPair is a matched send and receive (rank, post index) whose datatypes
// both have mixed type signatures (a struct {int, double}...): the trace
// records them as opaque, which a replay cannot compare.
type sigPair struct{ send, si, recv, ri int }

// maxSigSteps bounds the runs signatureFindings walks per message: a
// message whose signatures agree that far is taken as agreeing.
const maxSigSteps = 1 << 16

// signatureFindings reports the matched pairs of mixed datatypes whose type
// signatures differ (MPI 3.3.1: the sequence of basic types sent must be a
// prefix of the one the receive expects): a type-mismatch naming both calls
// and the first basic element that differs. Sizes may agree: Open MPI does
// not compare signatures, it copies bytes.
func signatureFindings(ranks []*rankData, pairs []sigPair, siteText siteTextFunc) []verdict.Finding {
	var fs []verdict.Finding
	for _, p := range pairs {
		sd, rd := ranks[p.send], ranks[p.recv]
		s, r := &sd.seg.recs[sd.posts[p.si]], &rd.seg.recs[rd.posts[p.ri]]
		at, sent, want, ok := sigDiff(s.Sig, s.Count, r.Sig, r.Count)
		if ok {
			continue
		}
		ss, rs := siteText(sd, s.Module, s.PC, s.Site), siteText(rd, r.Module, r.PC, r.Site)
		fs = append(fs, verdict.New(verdict.TypeMismatch, []int{p.send, p.recv},
			fmt.Sprintf("rank %d sends %d x %s (%s at %s), rank %d receives %d x %s (%s at %s): the type signatures differ at basic element %d (%s sent, %s expected)",
				p.send, s.Count, sigText(s.Sig), callName(uint32(s.Call)), siteOr(ss), p.recv, r.Count, sigText(r.Sig), callName(uint32(r.Call)), siteOr(rs), at, sent, want),
			callRef(p.send, sd, s, ss), callRef(p.recv, rd, r, rs)))
	}
	return fs
}

// sigDiff walks the signature a (one element's runs) repeated na times
// against b repeated nb times, over the shorter of the two: ok when they
// agree, else the index of the first basic element that differs and its
// type in each.
func sigDiff(a []sigRun, na int64, b []sigRun, nb int64) (at int64, x, y trace.Dtype, ok bool) {
	type cursor struct {
		runs   []sigRun
		rep    int64 // elements left
		i      int   // run
		left   int64 // basic elements left in run i
		active bool
	}
	start := func(runs []sigRun, n int64) cursor {
		c := cursor{runs: runs, rep: n}
		if n > 0 && len(runs) > 0 {
			c.left, c.active = runs[0].N, true
		}
		return c
	}
	next := func(c *cursor) {
		for c.left == 0 {
			if c.i++; c.i == len(c.runs) {
				if c.rep--; c.rep == 0 {
					c.active = false
					return
				}
				c.i = 0
			}
			c.left = c.runs[c.i].N
		}
	}
	for _, r := range slices.Concat(a, b) {
		if r.N <= 0 { // not what the shim writes: nothing to compare
			return 0, 0, 0, true
		}
	}
	ca, cb := start(a, na), start(b, nb)
	next(&ca)
	next(&cb)
	for step := 0; ca.active && cb.active && step < maxSigSteps; step++ {
		ta, tb := ca.runs[ca.i].Dtype, cb.runs[cb.i].Dtype
		if ta != tb {
			return at, ta, tb, false
		}
		n := min(ca.left, cb.left)
		at += n
		ca.left -= n
		cb.left -= n
		next(&ca)
		next(&cb)
	}
	return 0, 0, 0, true
}

// sigText renders a signature: "{int32 x 1, float64 x 1}".
func sigText(runs []sigRun) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, r := range runs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s x %d", r.Dtype, r.N)
	}
	b.WriteByte('}')
	return b.String()
}
