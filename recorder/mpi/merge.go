package mpi

import (
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// MergeOptions configure Merge.
type MergeOptions struct {
	Command []string     // the recorded command line, for the header
	Hash    string       // hash mode for the header ("" = what the segments say)
	Force   bool         // overwrite out
	Status  trace.Status // "" = derive (complete or crashed); the caller sets hung
	Message string       // prepended to the derived message
	// EndedAt is when p2ptrace began to end the job (Unix ns; 0: it did
	// not): it hung or outlived its timeout. A rank that aborted or failed
	// at or after it did so because it was being ended (a peer killed under
	// it, a Python rank's collective raising "connection closed"): it
	// counts as killed where it was blocked, not as a crash of its own.
	EndedAt int64
}

// RankEnd is how a rank's recording ended.
type RankEnd struct {
	Rank    int
	State   RankState // StateRunning or StateBlocked: the rank was killed
	Blocked string    // the MPI call it was blocked in (StateBlocked)
	Site    string    // file:line of that call, or of the failed/aborting call
	Error   string    // MPI error text (StateErrored, StateAborted)
}

// MergeResult is what Merge wrote.
type MergeResult struct {
	Header trace.Header
	Ranks  []RankEnd
	Events int64
}

// hashModes names the shim's hash modes by value (HASH_* in p2ptrace_shim.c).
var hashModes = [...]string{"full", "sample", "off"}

// computeGap is the smallest gap between two calls of a rank that becomes an
// OpCompute event (ns).
const computeGap = 1000

// defaultOpenMPIEager is Open MPI's btl_vader_eager_limit default.
const defaultOpenMPIEager = 4096

// openMPIEagerHeader is what of btl_vader_eager_limit Open MPI's headers
// take: with the default 4096, sends of up to 4040 bytes complete eagerly
// and from 4041 bytes they wait for the receiver (measured with Open MPI
// 4.1.4, testdata/mpi/README.md). The trace's eager limit is the largest
// payload sent eagerly, so the replay draws the line where the MPI did.
const openMPIEagerHeader = 56

var segName = regexp.MustCompile(`^rank-([0-9]+)\.seg$`)

// rankData is one rank's decoded segment, prepared for emission.
type rankData struct {
	seg    *segment
	posts  []int // record index of each post, by shim seq
	doneOf []int // record index of each post's done record, -1 if none
	skip   []bool
	op     []trace.Op // trace op of each post
	reqs   [][]uint64 // Reqs of each post (wait family), after dropping null requests
	// vcounts holds, by post index, a v collective's per-member byte
	// counts (the shim's vcounts: its post's trailer), for vcountFindings.
	vcounts map[int][]int64
	flag    []bool
	tseq    []uint64        // trace Seq of each post
	compute []int64         // compute gap (ns) before each post, 0 if none
	matchR  []int32         // MatchRank of each post's done
	matchS  []uint64        // MatchSeq
	recvAt  map[int]int     // matched probe's post -> its message's receive (placeMatched)
	placed  map[int]*record // that receive -> its done record
	offset  int64           // rank's start relative to the run's start (ns)
	modules map[uint32]record
	pySites map[uint32]record // version 3 site records by id (Python programs)
}

// Merge reads the segments of every rank in dir and writes them as one trace
// out. A rank 0..size-1 without a segment ended before it created one (the
// job was taken down by another rank's MPI error, abort or kill while it was
// in MPI_Init): it merges as a rank without calls and the trace is crashed.
// A damaged or foreign segment is an error naming the file.
func Merge(dir, out string, o MergeOptions) (*MergeResult, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	segs := map[int]*segment{}
	for _, e := range entries {
		m := segName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		s, err := readSegment(filepath.Join(dir, e.Name()))
		if errors.Is(err, errUninitialized) {
			// Killed inside MPI_Init (another rank aborted early): a rank
			// without calls, not a damaged file.
			s = &segment{path: filepath.Join(dir, e.Name()), hdr: segHeader{Rank: int32(n), State: StateRunning}, uninit: true}
			err = nil
		}
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		if int(s.hdr.Rank) != n {
			return nil, fmt.Errorf("merge: segment %s: %w: it says rank %d", s.path, ErrSegment, s.hdr.Rank)
		}
		segs[n] = s
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("merge: no segments (rank-N.seg) in %s: was the program run with the shim preloaded and %s set?", dir, EnvSegDir)
	}
	size := -1
	for _, s := range segs {
		if s.uninit {
			continue
		}
		if size >= 0 && int(s.hdr.Size) != size {
			return nil, fmt.Errorf("merge: segments of %s disagree on the world size (%d and %d)", dir, size, s.hdr.Size)
		}
		size = int(s.hdr.Size)
	}
	if size < 0 {
		return nil, fmt.Errorf("merge: no rank of %s got past MPI_Init (every segment's header is unwritten)", dir)
	}
	for _, s := range segs {
		if s.uninit {
			s.hdr.Size = int32(size)
		}
	}
	// A rank without a segment merges as a rank without calls (it ended
	// before creating one, or its file was not gathered), unless the
	// header's world size is out of all proportion to the segments there
	// (a damaged or foreign header): then listing them is the error.
	var missing []string
	nMissing := 0 // listed up to 10: a header may claim millions of ranks
	for r := range size {
		if segs[r] == nil {
			if nMissing++; len(missing) < 10 {
				missing = append(missing, strconv.Itoa(r))
			}
		}
	}
	if nMissing > 1024 && nMissing > 16*(size-nMissing) {
		if nMissing > len(missing) {
			missing = append(missing, fmt.Sprintf("and %d more", nMissing-len(missing)))
		}
		return nil, fmt.Errorf("merge: %s: world size %d but no segment for rank %s", dir, size, strings.Join(missing, ", "))
	}
	for r := range size {
		if segs[r] == nil {
			segs[r] = &segment{path: SegmentPath(dir, r), hdr: segHeader{Rank: int32(r), Size: int32(size), State: StateRunning},
				uninit: true, missing: true}
		}
	}
	for r := range segs {
		if r >= size {
			return nil, fmt.Errorf("merge: segment %s: rank %d outside the world size %d", SegmentPath(dir, r), r, size)
		}
	}

	ranks := make([]*rankData, size)
	start := int64(0)
	for r := range size {
		if s := segs[r].hdr.StartUnix; s != 0 && (start == 0 || s < start) {
			start = s
		}
	}
	for r := range size {
		if segs[r].uninit {
			segs[r].hdr.StartUnix = start
		}
	}
	for r := range size {
		rd, err := prepare(segs[r])
		if err != nil {
			return nil, fmt.Errorf("merge: segment %s: %w", segs[r].path, err)
		}
		rd.offset = segs[r].hdr.StartUnix - start
		ranks[r] = rd
	}
	mixed := match(ranks)

	cwd, _ := os.Getwd()
	sites := newSiteResolver(cwd)
	defer sites.close()

	var h0 segHeader
	for r := size - 1; r >= 0; r-- {
		if !segs[r].uninit {
			h0 = segs[r].hdr // the lowest initialized rank's
		}
	}
	hdr := trace.Header{
		Command:       o.Command,
		WorldSize:     size,
		Backend:       backendName(h0.Library),
		EagerLimit:    h0.Eager,
		HashMode:      o.Hash,
		StartUnixNano: start,
	}
	for _, s := range segs { // ranks that ended early did not read it (see the shim's read_eager_limit)
		if hdr.EagerLimit == 0 {
			hdr.EagerLimit = s.hdr.Eager
		}
		hdr.BsendOverhead = max(hdr.BsendOverhead, int64(s.hdr.BsendOverhead))
	}
	if strings.HasPrefix(hdr.Backend, "Open MPI") {
		if hdr.EagerLimit == 0 {
			hdr.EagerLimit = defaultOpenMPIEager
		}
		hdr.EagerLimit = max(hdr.EagerLimit-openMPIEagerHeader, 0)
	}
	if hdr.HashMode == "" {
		hdr.HashMode = hashModes[min(int(h0.HashMode), len(hashModes)-1)]
	}
	hdr.Devices = rankDevices(segs, size)
	var made map[int]commMade
	hdr.Comms, made = commGroups(segs, size)
	if strings.HasPrefix(hdr.Backend, pythonTorchLibrary) {
		hdr.HashAlgo = trace.HashBLAKE2b
	}
	end := start
	for r, rd := range ranks {
		h := rd.seg.hdr
		e := h.EndUnix
		if e == 0 {
			e = segs[r].hdr.StartUnix + int64(lastTime(rd.seg))
		}
		end = max(end, e)
	}
	hdr.EndUnixNano = end

	w, err := trace.Create(out, hdr, trace.WriterOptions{Force: o.Force, NoSync: true, PayloadCap: -1})
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	siteIDs := map[siteKey]uint32{}
	pySiteIDs := map[string]uint32{}
	siteOf := func(rd *rankData, module uint32, pc uint64, py uint32) uint32 {
		if py != 0 {
			s, ok := rd.pySites[py]
			if !ok {
				return 0
			}
			file, fn, _ := strings.Cut(s.Path, "\x00")
			k := file + ":" + strconv.FormatInt(s.Count, 10) + ":" + fn
			if id, ok := pySiteIDs[k]; ok {
				return id
			}
			id := uint32(len(siteIDs) + len(pySiteIDs) + 1)
			pySiteIDs[k] = id
			w.AddSite(trace.Site{ID: id, Function: fn, File: file, Line: int(s.Count)})
			return id
		}
		m, ok := rd.modules[module]
		if !ok || pc == 0 {
			return 0
		}
		k := siteKey{m.Path, pc - m.PC}
		if id, ok := siteIDs[k]; ok {
			return id
		}
		id := uint32(len(siteIDs) + len(pySiteIDs) + 1)
		siteIDs[k] = id
		s := sites.resolve(k)
		w.AddSite(trace.Site{ID: id, Function: s.Function, File: s.File, Line: s.Line})
		return id
	}
	siteText := func(rd *rankData, module uint32, pc uint64, py uint32) string {
		if py != 0 {
			s, ok := rd.pySites[py]
			if !ok {
				return ""
			}
			file, _, _ := strings.Cut(s.Path, "\x00")
			return file + ":" + strconv.FormatInt(s.Count, 10)
		}
		m, ok := rd.modules[module]
		if !ok || pc == 0 {
			return ""
		}
		s := sites.resolve(siteKey{m.Path, pc - m.PC})
		if s.File == "" {
			return s.Function
		}
		return s.File + ":" + strconv.Itoa(s.Line)
	}
	if len(made) > 0 {
		// The call that made each communicator, and its line, for the
		// reports that name it.
		for i := range hdr.Comms {
			m, ok := made[hdr.Comms[i].ID]
			if !ok || m.rank >= len(ranks) || ranks[m.rank] == nil {
				continue
			}
			hdr.Comms[i].Call = callName(m.call)
			hdr.Comms[i].Site = siteText(ranks[m.rank], m.module, m.pc, m.site)
		}
		w.SetHeader(func(h *trace.Header) { h.Comms = hdr.Comms })
	}
	if un := unstartedRequests(ranks, siteText); len(un) > 0 {
		w.SetHeader(func(h *trace.Header) { h.Unstarted = un })
	}

	var events int64
	for r, rd := range ranks {
		events += emit(w, int32(r), rd, siteOf)
	}

	res := &MergeResult{Ranks: make([]RankEnd, size), Events: events}
	status := trace.StatusComplete
	var fs []verdict.Finding
	var notes []string             // how the merge went, in words: the header's message
	var leaks []leak               // of the ranks that finalized, worded across ranks below
	var errs []verdict.Finding     // MPI errors, one finding per call site and error below
	var overruns []verdict.Finding // buffer overruns, folded across ranks as errs
	for r, rd := range ranks {
		h := rd.seg.hdr
		re := RankEnd{Rank: r, State: h.State}
		switch h.State {
		case StateRunning:
			switch {
			case rd.seg.missing:
				re.Error = "no segment: it ended before creating one (taken down inside MPI_Init), or its " +
					filepath.Base(rd.seg.path) + " was not gathered"
				notes = append(notes, fmt.Sprintf("rank %d has %s", r, re.Error))
			case rd.seg.uninit:
				re.Error = "ended inside MPI_Init (its segment header was never written)"
			}
		case StateBlocked:
			if h.CurCall == callFinalize {
				// Ended inside MPI_Finalize (the launcher takes the job down
				// as soon as one rank exits non-zero): it had finished.
				re.State = StateFinalized
				break
			}
			re.Blocked = callName(h.CurCall)
			re.Site = siteText(rd, h.CurModule, h.CurPC, h.CurSite)
		case StateAborted, StateErrored, StateSignaled, StateExited:
			if o.EndedAt != 0 && h.EndUnix >= o.EndedAt && h.CurCall != callNone {
				re.State = StateBlocked
				re.Blocked = callName(h.CurCall)
				re.Site = siteText(rd, h.CurModule, h.CurPC, h.CurSite)
				break
			}
			re.Site = siteText(rd, h.ErrModule, h.ErrPC, h.ErrSite)
			re.Error = h.Error
			if h.ErrCall == callPyException {
				// A Python rank died of an uncaught exception: a crash at
				// its line (the error text is the exception).
				op := verdict.OpRef{Rank: r, Op: "uncaught exception", Peer: trace.NoRank, Tag: -1, Site: re.Site, Call: "uncaught exception", Untraced: true}
				msg := fmt.Sprintf("rank %d: uncaught exception", r)
				if re.Error != "" {
					msg += ": " + re.Error
				}
				fs = append(fs, verdict.New(verdict.Crash, []int{r}, msg, op))
				break
			}
			if h.State == StateSignaled {
				errs = append(errs, signalFinding(re, rd, h, siteText))
				break
			}
			if h.State == StateExited {
				errs = append(errs, exitFinding(re, rd, h, siteText))
				break
			}
			call := callName(h.ErrCall)
			if h.ErrCall == callNone {
				if call = h.ErrName; call == "" {
					// Raised outside the calls the shim records: its line
					// when the stack showed it, else the last recorded call.
					call = "an MPI call p2ptrace does not record"
					if re.Site == "" && h.CurCall != callNone {
						call += " (after " + callName(h.CurCall)
						if s := siteText(rd, h.CurModule, h.CurPC, h.CurSite); s != "" {
							call += " at " + s
						}
						call += ")"
					}
				}
			}
			errs = append(errs, errorFinding(re, call))
		}
		if re.State != StateFinalized {
			status = trace.StatusCrashed
		}
		res.Ranks[r] = re
		fs = append(fs, overlapFindings(r, rd, siteText)...)
		overruns = append(overruns, overrunFindings(r, rd, sites, siteText)...)
		fs = append(fs, recvWriteFindings(r, rd, siteText)...)
		fs = append(fs, releasedFindings(r, rd, siteText)...)
		// (A rank killed after MPI_Finalize returned had finalized: what
		// it never freed is leaked all the same.)
		if re.State == StateFinalized || h.State == StateSignaled && h.ErrCall == callNone && h.CurCall == callFinalize {
			fs = append(fs, leakFindings(r, rd, siteText)...)
			leaks = append(leaks, resourceLeaks(r, rd, siteText)...)
		}
	}
	fs = append(fs, sameErrors(errs)...)
	fs = append(fs, sameErrors(overruns)...) // (one finding for the ranks that overrun alike)
	fs = append(fs, resourceLeakFindings(leaks)...)
	if o.Status != "" {
		status = o.Status
	}
	msg := o.Message
	if len(notes) > 0 {
		if msg != "" {
			msg += "; "
		}
		msg += strings.Join(notes, "; ")
	}
	if status == trace.StatusCrashed && !slices.ContainsFunc(fs, func(f verdict.Finding) bool {
		return f.Kind == verdict.Crash || f.Kind == verdict.InvalidCall || f.Kind == verdict.Truncation
	}) {
		// No rank said why: the ranks that did not finish were killed.
		f := verdict.New(verdict.Crash, nil, "")
		for r := range ranks {
			re := res.Ranks[r]
			if re.State != StateRunning && re.State != StateBlocked {
				continue
			}
			f.Ranks = append(f.Ranks, r)
			if re.Blocked != "" {
				f.Ops = append(f.Ops, verdict.OpRef{Rank: r, Op: re.Blocked, Peer: trace.NoRank, Tag: -1, Site: re.Site, Call: re.Blocked, Untraced: true})
			}
		}
		f.Message = verdict.RankList(f.Ranks) + " ended without MPI_Finalize (killed?)"
		fs = append(fs, f)
	}
	fs = append(fs, signatureFindings(ranks, mixed, siteText)...)
	fs = append(fs, vcountFindings(ranks, siteText)...)
	fs = append(fs, rmaFindings(ranks, siteText)...)
	// One bug, one finding: the MPI error a rule's finding explains (the
	// MPI_ERR_TRUNCATE of a collective whose sizes disagree) is said in it,
	// and a rule's finding at a call in a loop is said once (the same kind
	// and ops: verdict.Dedup, as check keeps them).
	fs = verdict.OnePerBug(fs)
	w.SetHeader(func(h *trace.Header) { h.Findings = fs })
	if err := w.Close(status, msg); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	res.Header = hdr
	res.Header.FormatVersion = trace.FormatVersion
	res.Header.Status = status
	res.Header.Message = msg
	res.Header.Findings = fs
	res.Header.FindingsVersion = verdict.Version
	res.Header.Events = events
	return res, nil
}

// sameErrors folds the MPI errors (fatal signals, exits without
// MPI_Finalize) of ranks that failed the same way in the same call at the
// same line (a bad communicator every rank passes) into one finding naming
// them all: one bug, one finding. Findings keep the order of their first
// rank.
func sameErrors(errs []verdict.Finding) []verdict.Finding {
	type key struct {
		kind          verdict.Kind
		call, site    string
		message, hint string
	}
	keyOf := func(f *verdict.Finding) (key, bool) {
		if len(f.Ranks) != 1 || len(f.Ops) > 1 || len(f.Ops) == 1 && f.Ops[0].Site == "" {
			return key{}, false
		}
		// (A rank's message begins "rank N: " or "rank N ", as an exit's.)
		prefix := fmt.Sprintf("rank %d", f.Ranks[0])
		if !strings.HasPrefix(f.Message, prefix+": ") && !strings.HasPrefix(f.Message, prefix+" ") {
			return key{}, false
		}
		k := key{kind: f.Kind, message: strings.TrimPrefix(f.Message, prefix), hint: f.Hint}
		if len(f.Ops) == 1 {
			k.call, k.site = f.Ops[0].Call, f.Ops[0].Site
		}
		return k, true
	}
	var out []verdict.Finding
	at := map[key]int{} // index in out of the finding a key folds into
	for _, f := range errs {
		k, ok := keyOf(&f)
		if !ok {
			out = append(out, f)
			continue
		}
		i, seen := at[k]
		if !seen {
			at[k] = len(out)
			out = append(out, f)
			continue
		}
		g := &out[i]
		g.Ranks = append(g.Ranks, f.Ranks...)
		g.Ops = append(g.Ops, f.Ops...)
		g.Message = verdict.RankList(g.Ranks) + k.message
	}
	return out
}

// outsideBefore and outsideAfter begin the error the shim gives a call made
// before MPI_Init or after MPI_Finalize (outside_call).
const (
	outsideBefore = "called before MPI_Init"
	outsideAfter  = "called after MPI_Finalize"
)

// errorFinding is the finding of a rank that called MPI_Abort (a crash) or
// hit an MPI error (named by kind as the replay names the same errors), at
// the call that did it.
func errorFinding(re RankEnd, call string) verdict.Finding {
	op := verdict.OpRef{Rank: re.Rank, Op: call, Peer: trace.NoRank, Tag: -1, Site: re.Site, Call: call, Untraced: true}
	if re.State == StateAborted {
		return verdict.New(verdict.Crash, []int{re.Rank}, fmt.Sprintf("rank %d: %s", re.Rank, re.Error), op) // "MPI_Abort called with error code N"
	}
	kind := verdict.InvalidCall
	if strings.HasPrefix(re.Error, "MPI_ERR_TRUNCATE") {
		kind = verdict.Truncation
	}
	msg := fmt.Sprintf("rank %d: MPI error in %s", re.Rank, call)
	if re.Error != "" {
		msg += ": " + re.Error
	}
	if strings.HasPrefix(re.Error, outsideBefore) || strings.HasPrefix(re.Error, outsideAfter) {
		f := verdict.New(kind, []int{re.Rank}, msg, op)
		f.Hint = "make every MPI call after MPI_Init (or MPI_Init_thread) returns and before MPI_Finalize is called"
		return f
	}
	if strings.HasPrefix(re.Error, "MPI_ERR_RMA_SYNC") && !strings.Contains(re.Error, "MPI-3.1 sec.") {
		msg += " (MPI-3.1 sec. 11.5: an RMA call is made inside an access epoch to its target, which MPI_Win_fence, MPI_Win_start, MPI_Win_lock or MPI_Win_lock_all opened, and MPI_Win_unlock or MPI_Win_complete closes an epoch that its rank opened)"
	}
	return verdict.New(kind, []int{re.Rank}, msg, op)
}

// signalFinding is the crash of rank re, killed by a fatal signal (the
// shim's handler noted it): in the MPI call it came in, which the program
// handed something the library could not use (a null or too short
// buffer, a freed handle), or in the program's own code, after its last
// MPI call.
func signalFinding(re RankEnd, rd *rankData, h segHeader, siteText func(*rankData, uint32, uint64, uint32) string) verdict.Finding {
	if h.ErrCall != callNone {
		call := callName(h.ErrCall)
		op := verdict.OpRef{Rank: re.Rank, Op: call, Peer: trace.NoRank, Tag: -1, Site: re.Site, Call: call, Untraced: true}
		f := verdict.New(verdict.Crash, []int{re.Rank}, fmt.Sprintf("rank %d: killed by %s inside %s", re.Rank, re.Error, call), op)
		f.Hint = "check the arguments of this call: a buffer that is null, freed or shorter than its count of the datatype, or a handle that was never made or already freed"
		return f
	}
	msg := fmt.Sprintf("rank %d: killed by %s in the program's own code", re.Rank, re.Error)
	f := verdict.New(verdict.Crash, []int{re.Rank}, msg)
	afterLastCall(&f, re, rd, h, siteText)
	return f
}

// afterLastCall says in f that rank re's end came after its last MPI call
// (the header's current call), which it names, when it made one.
func afterLastCall(f *verdict.Finding, re RankEnd, rd *rankData, h segHeader, siteText func(*rankData, uint32, uint64, uint32) string) {
	if h.CurCall == callNone {
		return
	}
	call := callName(h.CurCall)
	site := siteText(rd, h.CurModule, h.CurPC, h.CurSite)
	f.Message += ", after " + call
	if site != "" {
		f.Message += " at " + site
	}
	f.Ops = []verdict.OpRef{{Rank: re.Rank, Op: call, Peer: trace.NoRank, Tag: -1, Site: site, Call: call, Untraced: true}}
}

// exitFinding is rank re's exit without MPI_Finalize (MPI-3.1 sec. 8.7:
// "All processes must call MPI_FINALIZE before exiting"), after its last
// call: an invalid program when it exited with status 0 (it returned from
// main, say), a crash when it gave up with another status.
func exitFinding(re RankEnd, rd *rankData, h segHeader, siteText func(*rankData, uint32, uint64, uint32) string) verdict.Finding {
	kind, hint := verdict.InvalidCall, "call MPI_Finalize on every rank before it exits, returning from main included"
	if h.ErrClass != 0 {
		kind, hint = verdict.Crash, "a rank that gives up calls MPI_Abort, which ends the job; one that exits calls MPI_Finalize first"
	}
	f := verdict.New(kind, []int{re.Rank}, fmt.Sprintf("rank %d exited with status %d without calling MPI_Finalize (MPI-3.1 sec. 8.7: every process calls it before it exits)", re.Rank, h.ErrClass))
	f.Hint = hint
	afterLastCall(&f, re, rd, h, siteText)
	return f
}

// backendName is the MPI library's name and version: the first line of
// MPI_Get_library_version up to its first comma ("Open MPI v4.1.4").
// pythonTorchLibrary begins the library name the Python recorder writes in
// its segments (recorder/python/p2ptrace_rec/torchrec.py): its payload
// hashes are BLAKE2b, not the shim's XXH64.
const pythonTorchLibrary = "torch.distributed"

func backendName(lib string) string {
	lib = strings.TrimSpace(lib)
	if i := strings.Index(lib, ","); i > 0 {
		lib = lib[:i]
	}
	if lib == "" {
		return "MPI"
	}
	return lib
}

func lastTime(s *segment) uint64 {
	var t uint64
	for _, r := range s.recs {
		t = max(t, r.T0, r.T1)
	}
	return t
}

// prepare indexes a rank's records and decides the trace op of every post.
func prepare(s *segment) (*rankData, error) {
	rd := &rankData{seg: s, modules: map[uint32]record{}}
	for i, r := range s.recs {
		switch r.Type {
		case recPost:
			rd.posts = append(rd.posts, i)
			rd.doneOf = append(rd.doneOf, -1)
		case recDone:
			if rd.doneOf[r.Seq] >= 0 {
				return nil, fmt.Errorf("%w: call %d completed twice", ErrSegment, r.Seq)
			}
			rd.doneOf[r.Seq] = i
		case recModule:
			rd.modules[r.Module] = r
		case recSite:
			if rd.pySites == nil {
				rd.pySites = map[uint32]record{}
			}
			rd.pySites[r.Module] = r
		}
	}
	n := len(rd.posts)
	rd.skip = make([]bool, n)
	rd.op = make([]trace.Op, n)
	rd.reqs = make([][]uint64, n)
	rd.flag = make([]bool, n)
	rd.tseq = make([]uint64, n)
	rd.compute = make([]int64, n)
	rd.matchR = make([]int32, n)
	rd.matchS = make([]uint64, n)
	nullReq := map[uint64]bool{}
	placeMatched(rd)
	rejected := rejectedCall(s, rd)
	var last uint64
	var seq uint64
	for i, ri := range rd.posts {
		p := &s.recs[ri]
		rd.matchR[i] = trace.NoRank
		if i == rejected {
			rd.skip[i] = true
			continue
		}
		var d *record
		if j := rd.doneOf[i]; j >= 0 {
			d = &s.recs[j]
		}
		op := trace.Op(p.Op)
		var reqs []uint64
		if op.IsCollective() {
			// A collective's trailer is its per-member counts, not requests.
			if len(p.Reqs) > 0 {
				if rd.vcounts == nil {
					rd.vcounts = map[int][]int64{}
				}
				vc := make([]int64, len(p.Reqs))
				for k, c := range p.Reqs {
					vc[k] = int64(c)
				}
				rd.vcounts[i] = vc
			}
		} else {
			reqs = dropNull(p.Reqs, nullReq)
		}
		switch {
		case isInit(p.Call) || p.Call == callRequestFree && op == 0:
			// A persistent request's init or free: no trace op (its Starts
			// and the Free of an active one are).
			rd.skip[i] = true
			continue
		case p.Call == callMrecv || p.Call == callImrecv:
			// The receive of a matched probe's message, placed right after
			// the probe (mprobe.go); an Imrecv's request is complete when
			// posted.
			if p.Req != 0 {
				nullReq[p.Req] = true
			}
			if rd.placed[i] == nil {
				rd.skip[i] = true // of MPI_MESSAGE_NO_PROC
			} else {
				rd.op[i] = trace.OpRecv
			}
			continue
		case (op.IsSend() || op.IsRecv() || op == trace.OpProbe || op == trace.OpIprobe) && p.Peer == trace.ProcNull:
			// MPI_PROC_NULL: completes at once, matches nothing.
			rd.skip[i] = true
			if p.Req != 0 {
				nullReq[p.Req] = true
			}
		case p.Call == callWaitsome:
			if d != nil {
				reqs = dropNull(d.Reqs, nullReq)
				op = trace.OpWaitall
			} else {
				op = trace.OpWaitany // still waiting for any of them
			}
		case p.Call == callTestany || p.Call == callTestsome:
			if d != nil && d.Flag && len(d.Reqs) > 0 {
				reqs = dropNull(d.Reqs, nullReq)
				rd.flag[i] = true
			}
			if len(reqs) == 1 {
				op = trace.OpTest
			} else {
				op = trace.OpTestall
			}
		case !op.Valid():
			return nil, fmt.Errorf("%w: call %d (%s) has no trace op", ErrSegment, i, callName(uint32(p.Call)))
		}
		if d != nil && p.Call != callTestany && p.Call != callTestsome {
			rd.flag[i] = d.Flag
		}
		switch op {
		case trace.OpWait, trace.OpWaitall, trace.OpWaitany, trace.OpTest, trace.OpTestall, trace.OpFree, trace.OpCancel:
			if len(reqs) == 0 {
				rd.skip[i] = true // only null requests: nothing to replay
			}
		}
		rd.op[i] = op
		rd.reqs[i] = reqs
		if rd.skip[i] {
			continue
		}
		if last > 0 && p.T0 > last && p.T0-last > computeGap {
			rd.compute[i] = int64(p.T0 - last)
			seq++
		}
		rd.tseq[i] = seq
		seq++
		if j, ok := rd.recvAt[i]; ok {
			rd.tseq[j] = seq
			seq++
		}
		last = max(last, p.T0, p.T1)
		if d != nil {
			last = max(last, d.T1)
		}
	}
	return rd, nil
}

// commGroups lists, by id, the communicators other than the world that the
// ranks' comm records name, with their members' world ranks. One whose
// records disagree, or name a rank outside the world, is left out (an
// intercommunicator: each side records its own group).
//
// made says, by id, which rank's record names the call that made the
// communicator (the lowest rank's), for its call and site.
func commGroups(segs map[int]*segment, size int) ([]trace.CommGroup, map[int]commMade) {
	groups := map[int][]int{}
	bad := map[int]bool{}
	made := map[int]commMade{}
	for r := range size {
		s := segs[r]
		if s == nil {
			continue
		}
		for i := range s.recs {
			c := &s.recs[i]
			if c.Type != recComm || c.Comm == 0 || bad[int(c.Comm)] {
				continue
			}
			ranks := make([]int, len(c.Reqs))
			for j, w := range c.Reqs {
				ranks[j] = int(int64(w))
				if ranks[j] < 0 || ranks[j] >= size {
					bad[int(c.Comm)] = true
				}
			}
			if old, ok := groups[int(c.Comm)]; ok && !slices.Equal(old, ranks) {
				bad[int(c.Comm)] = true
			}
			groups[int(c.Comm)] = ranks
			if _, ok := made[int(c.Comm)]; !ok && c.Call != callNone {
				made[int(c.Comm)] = commMade{rank: r, call: uint32(c.Call), module: c.Module, pc: c.PC, site: c.Site}
			}
		}
	}
	var out []trace.CommGroup
	for _, id := range slices.Sorted(maps.Keys(groups)) {
		if !bad[id] {
			out = append(out, trace.CommGroup{ID: id, Ranks: groups[id]})
		}
	}
	return out, made
}

// commMade is the record of the call that made a communicator, on one rank.
type commMade struct {
	rank   int
	call   uint32
	module uint32
	pc     uint64
	site   uint32 // a Python site (torch's new_group)
}

// rejectedCall is the index of the post of the call that MPI refused for a
// bad argument (the rank's last post, never completed, the call its error
// names), or -1. Such a call took no effect: in the trace it would be a
// message no rank sent, or a receive no rank posted, and the replay would
// report what follows from it (a type mismatch, a deadlock under sync, the
// same bad rank again) beside the invalid-call the error already is.
func rejectedCall(s *segment, rd *rankData) int {
	n := len(rd.posts)
	if s.hdr.State != StateErrored || !s.hdr.ErrRejected || n == 0 || rd.doneOf[n-1] >= 0 {
		return -1
	}
	if uint32(s.recs[rd.posts[n-1]].Call) != s.hdr.ErrCall {
		return -1
	}
	return n - 1
}

func dropNull(reqs []uint64, null map[uint64]bool) []uint64 {
	if len(null) == 0 {
		return reqs
	}
	var out []uint64
	for _, q := range reqs {
		if !null[q] {
			out = append(out, q)
		}
	}
	return out
}

// match fills MatchRank/MatchSeq offline: a receive with actual source s
// and tag t on comm c took the earliest not yet taken send of s to this rank
// on c with tag t; receives are taken in post order. It returns the matched
// pairs whose two datatypes are mixed (signatureFindings compares them).
func match(ranks []*rankData) []sigPair {
	var mixed []sigPair
	type key struct{ src, dst, comm, tag int32 }
	type sendRef struct {
		rank int32
		i    int
	}
	queues := map[key][]sendRef{}
	for r, rd := range ranks {
		for i, ri := range rd.posts {
			p := &rd.seg.recs[ri]
			if rd.skip[i] || !rd.op[i].IsSend() || p.Peer < 0 || int(p.Peer) >= len(ranks) {
				continue
			}
			k := key{int32(r), p.Peer, p.Comm, p.Tag}
			queues[k] = append(queues[k], sendRef{int32(r), i})
		}
	}
	for r, rd := range ranks {
		order := recvOrder(rd)
		for i := range rd.posts {
			if order != nil {
				i = order[i]
			}
			d := rd.placed[i]
			if d == nil && rd.doneOf[i] >= 0 {
				d = &rd.seg.recs[rd.doneOf[i]]
			}
			if rd.skip[i] || !rd.op[i].IsRecv() || d == nil {
				continue
			}
			p := &rd.seg.recs[rd.posts[i]]
			if d.Source < 0 || int(d.Source) >= len(ranks) {
				continue
			}
			k := key{d.Source, int32(r), p.Comm, d.StatTag}
			q := queues[k]
			if len(q) == 0 {
				continue
			}
			s := q[0]
			queues[k] = q[1:]
			sd := ranks[s.rank]
			rd.matchR[i], rd.matchS[i] = s.rank, sd.tseq[s.i]
			sd.matchR[s.i], sd.matchS[s.i] = int32(r), rd.tseq[i]
			if len(p.Sig) > 0 && len(sd.seg.recs[sd.posts[s.i]].Sig) > 0 {
				mixed = append(mixed, sigPair{send: int(s.rank), si: s.i, recv: r, ri: i})
			}
		}
	}
	return mixed
}

// emit appends a rank's events to w and returns how many.
func emit(w *trace.Writer, rank int32, rd *rankData, siteOf func(*rankData, uint32, uint64, uint32) uint32) int64 {
	var n int64
	var ev trace.Event
	recs := rd.seg.recs
	postEv := func(i int, r *record, t int64) {
		ev = trace.Event{Kind: trace.KindPost, Rank: rank, Seq: rd.tseq[i], Op: rd.op[i],
			Peer: r.Peer, Tag: r.Tag, Comm: r.Comm, Dtype: trace.Dtype(r.Dtype), Count: r.Count, Bytes: r.Bytes,
			Req: r.Req, Reqs: rd.reqs[i], Site: siteOf(rd, r.Module, r.PC, r.Site), PostWall: t, PostVT: t,
			MatchRank: trace.NoRank, HashPost: r.Hash}
		switch rd.op[i] {
		case trace.OpBarrier, trace.OpIbarrier:
			ev.Peer, ev.Tag = 0, 0
		case trace.OpWait, trace.OpWaitall, trace.OpWaitany, trace.OpTest, trace.OpTestall, trace.OpFree, trace.OpCancel,
			trace.OpBufferAttach, trace.OpBufferDetach:
			ev.Peer, ev.Tag, ev.Comm, ev.Req = 0, 0, 0, 0 // (a Free's req is the shim's persistent id)
		}
		if rd.op[i].IsReduction() {
			// The shim writes a reduction's op in index (a stable code,
			// see trace.ReduceOp); the trace carries it in Stream.
			ev.Stream = int32(trace.ReduceOpOf(rd.op[i], r.Index))
		}
		if !rd.op[i].IsSend() && !rd.op[i].IsNonblockingCollective() {
			ev.HashPost = 0 // (a nonblocking collective's: its send side, see the shim)
		}
		if rd.placed != nil && rd.placed[i] != nil {
			ev.Req = 0 // the receive of a matched probe's message: blocking (an Imrecv's request is not)
		}
		w.Append(&ev)
		n++
	}
	doneEv := func(i int, r *record, t int64) {
		p := &recs[rd.posts[i]]
		ev = trace.Event{Kind: trace.KindDone, Rank: rank, Seq: rd.tseq[i], Op: rd.op[i],
			DoneWall: t, DoneVT: t, MatchVT: t, MatchRank: rd.matchR[i], MatchSeq: rd.matchS[i],
			Source: trace.NoRank, Flag: rd.flag[i]}
		op := rd.op[i]
		switch {
		case op.IsSend() || op.IsNonblockingCollective():
			ev.HashPost, ev.HashDone = p.Hash, r.Hash
		case op.IsRecv():
			ev.Source, ev.StatusTag, ev.StatusCnt, ev.HashDone = r.Source, r.StatTag, r.SCount, r.Hash
		case op == trace.OpProbe || op == trace.OpIprobe:
			if r.Flag || op == trace.OpProbe {
				ev.Source, ev.StatusTag, ev.StatusCnt = r.Source, r.StatTag, r.SCount
			}
		case op == trace.OpWaitany:
			// Index into the candidates as written (null requests left
			// out); the replay waits for that one, as the program did.
			ev.Index = -1
			if r.Index >= 0 && int(r.Index) < len(p.Reqs) {
				ev.Index = int32(slices.Index(rd.reqs[i], p.Reqs[r.Index]))
			}
		}
		w.Append(&ev)
		n++
	}
	for k := range recs {
		r := &recs[k]
		switch r.Type {
		case recPost:
			i := int(r.Seq)
			if rd.skip[i] || rd.placed[i] != nil {
				continue
			}
			if g := rd.compute[i]; g > 0 {
				t := rd.offset + int64(r.T0) - g
				ev = trace.Event{Kind: trace.KindPost, Rank: rank, Seq: rd.tseq[i] - 1, Op: trace.OpCompute,
					Duration: g, PostWall: t, PostVT: t, MatchRank: trace.NoRank}
				w.Append(&ev)
				ev = trace.Event{Kind: trace.KindDone, Rank: rank, Seq: rd.tseq[i] - 1, Op: trace.OpCompute,
					DoneWall: t + g, DoneVT: t + g, MatchVT: t + g, MatchRank: trace.NoRank, Source: trace.NoRank}
				w.Append(&ev)
				n += 2
			}
			postEv(i, r, rd.offset+int64(r.T0))
		case recDone:
			i := int(r.Seq)
			if rd.skip[i] || rd.placed[i] != nil {
				continue
			}
			t := rd.offset + int64(r.T1)
			doneEv(i, r, t)
			if j, ok := rd.recvAt[i]; ok {
				// The receive of the probed message, right after the probe
				// (mprobe.go): a blocking receive, not the Imrecv's request.
				postEv(j, &recs[rd.posts[j]], t)
				doneEv(j, rd.placed[j], t)
			}
		}
	}
	return n
}

// rankDevices is the devices of each rank's tensors, as the Python recorder
// noted them in the segment headers; nil when no rank noted any (an MPI job).
func rankDevices(segs map[int]*segment, size int) []string {
	var out []string
	for r, s := range segs {
		if s.hdr.Devices == "" || r < 0 || r >= size {
			continue
		}
		if out == nil {
			out = make([]string, size)
		}
		out[r] = s.hdr.Devices
	}
	return out
}
