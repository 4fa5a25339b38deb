package recorder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// runsOnGPU reports whether the executable is a Go program built with
// this module (package gpu records it).
func runsOnGPU(exe string) bool {
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		return false
	}
	if bi.Main.Path == modulePath {
		return true
	}
	for _, d := range bi.Deps {
		if d.Path == modulePath {
			return true
		}
	}
	return false
}

// modulePath is this module's path, as Go build info names it.
const modulePath = "github.com/p2ptrace/p2ptrace"

// FileHash is the SHA-256 of a file, in hex: what a trace's Rerun.Binary
// holds of the recorded executable.
func FileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// setRerun stores in the trace's header what a re-run of the program needs.
func setRerun(path string, o Options, binary string) error {
	prog, err := filepath.Abs(o.Program)
	if err != nil {
		return err
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return err
		}
	}
	r, err := trace.Open(path)
	if err != nil {
		return err
	}
	status := r.Header().Status
	r.Close()
	if status == trace.StatusRunning {
		return nil // cut short: leave the file as the program left it
	}
	return trace.UpdateHeader(path, func(h *trace.Header) {
		h.Rerun = &trace.Rerun{Program: prog, Args: o.Args, Dir: dir, Binary: binary}
	})
}

// setMPIRerun stores in an MPI trace's header what a re-run of the job needs.
func setMPIRerun(path string, o MPIOptions, exe string) error {
	binary, err := FileHash(exe)
	if err != nil {
		return err
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	return trace.UpdateHeader(path, func(h *trace.Header) {
		h.Rerun = &trace.Rerun{Program: exe, Args: o.Args, Dir: dir, Binary: binary, Ranks: o.Ranks, MPIArgs: o.MPIArgs}
	})
}

// Rerunner returns what check needs to judge a race by re-running the
// program of a trace recorded by Record or RecordMPI: it runs the program
// again (built again if it was a directory; an MPI job under mpirun with the
// shim) with one match forced. It returns nil and the reason when the trace
// cannot be re-run: not recorded by p2ptrace record, a torch job (not
// supported yet), or a program that changed or is gone since.
func Rerunner(ctx context.Context, tr *replay.Trace) (replay.Rerunner, string) {
	h := tr.Header()
	info := h.Rerun
	if info == nil {
		return nil, "the trace does not say how to re-run its program (record it with p2ptrace record)"
	}
	if info.Ranks > 0 {
		return mpiRerunner(ctx, tr)
	}
	if h.Backend != "sim" {
		return nil, fmt.Sprintf("re-running %s programs with a forced match is not supported yet", h.Backend)
	}
	// The program is checked (built, for a directory) at the first re-run,
	// so that a check with no race to judge builds nothing.
	var checked bool
	var unjudged string
	validate := func() string {
		if checked {
			return unjudged
		}
		checked = true
		exe, cleanup, err := program(ctx, info.Program, io.Discard)
		if err != nil {
			unjudged = fmt.Sprintf("the program %s cannot be run any more: %v", info.Program, err)
			return unjudged
		}
		binary, err := FileHash(exe)
		usesGPU := runsOnGPU(exe)
		cleanup()
		switch {
		case err != nil || binary != info.Binary:
			unjudged = fmt.Sprintf("the program %s changed since it was recorded", info.Program)
		case !usesGPU:
			// A trace names what check would run: only a program built on
			// package gpu (as p2ptrace record recorded it) is run again.
			unjudged = fmt.Sprintf("%s is not a Go program built on package gpu: not re-run", info.Program)
		}
		return unjudged
	}
	recorded := tr.Recorded()
	return func(m replay.ForcedMatch) (replay.RerunOutcome, error) {
		if why := validate(); why != "" {
			return replay.RerunOutcome{Unjudged: why}, nil
		}
		return rerun(ctx, h, recorded, m)
	}, ""
}

// mpiRerunner re-runs an MPI job recorded by RecordMPI under mpirun with
// the shim, one AnySource receive or probe pinned to the alternative
// sender. Only an unchanged executable that links the MPI library is run
// again.
func mpiRerunner(ctx context.Context, tr *replay.Trace) (replay.Rerunner, string) {
	h := tr.Header()
	info := h.Rerun
	if binary, err := FileHash(info.Program); err != nil || binary != info.Binary {
		return nil, fmt.Sprintf("the program %s changed or is gone since it was recorded", info.Program)
	}
	if !linksMPI(info.Program) {
		return nil, fmt.Sprintf("%s does not link an MPI library: not re-run", info.Program)
	}
	// The shim counts a rank's receives and probes from MPI_ANY_SOURCE
	// (anySourceCalls): map each trace receive or probe to its ordinal.
	nth := map[replay.ForcedMatch]int{}
	ordinal := func(m replay.ForcedMatch) (int, bool) {
		k := replay.ForcedMatch{Rank: m.Rank, Seq: m.Seq}
		if n, ok := nth[k]; ok {
			return n, true
		}
		n, ok := anySourceOrdinal(tr.Reader(), m.Rank, m.Seq)
		if ok {
			nth[k] = n
		}
		return n, ok
	}
	recorded := tr.Recorded()
	return func(m replay.ForcedMatch) (replay.RerunOutcome, error) {
		n, ok := ordinal(m)
		if !ok {
			return replay.RerunOutcome{Illegal: true}, nil
		}
		dir, err := os.MkdirTemp("", "p2ptrace-rerun-")
		if err != nil {
			return replay.RerunOutcome{}, err
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "rerun.db")
		var stderr bytes.Buffer
		sum, err := RecordMPI(ctx, MPIOptions{Program: info.Program, Args: info.Args, Ranks: info.Ranks, MPIArgs: info.MPIArgs,
			Output: out, Hash: h.HashMode, HangTimeout: RerunHangTimeout, ForceMatch: fmt.Sprintf("%d:%d=%d", m.Rank, n, m.Src),
			Stdout: io.Discard, Stderr: &stderr})
		if sum == nil {
			return replay.RerunOutcome{}, err
		}
		// The re-run's trace numbers its ops anew (the merge turns gaps
		// between calls into Compute ops, and gaps depend on timing): find
		// the forced receive or probe by its ordinal, as the shim did.
		matched := func(rr *trace.Reader) bool {
			seq, ok := nthAnySource(rr, m.Rank, n)
			return ok && matchedFrom(rr, m.Rank, seq, m.Src)
		}
		return judgeRerun(out, sum, stderr.String(), recorded, matched)
	}, ""
}

// RerunHangTimeout is how long a re-run MPI job may sit with every rank
// blocked before it counts as hung (check's re-runs are short programs run
// again: they need not wait DefaultHangTimeout).
const RerunHangTimeout = 2 * time.Second

// linksMPI reports whether the executable links an MPI library.
func linksMPI(exe string) bool {
	f, err := elf.Open(exe)
	if err != nil {
		return false
	}
	defer f.Close()
	libs, _ := f.ImportedLibraries()
	for _, l := range libs {
		if strings.HasPrefix(l, "libmpi") {
			return true
		}
	}
	return false
}

// rerun records the program once more with m forced and compares.
func rerun(ctx context.Context, h trace.Header, recorded []verdict.Finding, m replay.ForcedMatch) (replay.RerunOutcome, error) {
	dir, err := os.MkdirTemp("", "p2ptrace-rerun-")
	if err != nil {
		return replay.RerunOutcome{}, err
	}
	defer os.RemoveAll(dir)
	info := h.Rerun
	var stderr bytes.Buffer
	seed := h.Seed
	eager := h.EagerLimit
	if eager == 0 {
		eager = -1 // recorded with no eager sends
	}
	out := filepath.Join(dir, "rerun.db")
	sum, err := Record(ctx, Options{Program: info.Program, Args: info.Args, Dir: info.Dir, Output: out, Hash: h.HashMode,
		Eager: eager, Seed: &seed, ForceMatch: m.String(), Stdout: io.Discard, Stderr: &stderr})
	if sum == nil {
		return replay.RerunOutcome{}, err
	}
	// The simulated run numbers its ops as the recording did.
	matched := func(rr *trace.Reader) bool { return matchedFrom(rr, m.Rank, m.Seq, m.Src) }
	return judgeRerun(out, sum, stderr.String(), recorded, matched)
}

// judgeRerun says how a re-run recorded in out ended (see judgeOutcome).
func judgeRerun(out string, sum *Summary, stderr string, recorded []verdict.Finding, matched func(*trace.Reader) bool) (replay.RerunOutcome, error) {
	tr, err := replay.OpenTrace(out)
	if err != nil {
		return replay.RerunOutcome{}, err
	}
	defer tr.Close()
	return judgeOutcome(sum, stderr, recorded, matched(tr.Reader())), nil
}

// judgeOutcome says how a re-run ended, from its summary and whether the
// forced receive matched the forced sender: illegal (no evidence either
// way) as replay.RerunProvesNothing says, else failed on a non-zero exit,
// a crash, a hang, or findings the recording did not have.
func judgeOutcome(sum *Summary, stderr string, recorded []verdict.Finding, matched bool) replay.RerunOutcome {
	if replay.RerunProvesNothing(matched, sum.ProgramError != "", sum.Header.Findings) {
		return replay.RerunOutcome{Illegal: true}
	}
	var old verdict.Set
	old.Add(recorded...)
	var o replay.RerunOutcome
	var parts []string
	if sum.ProgramError != "" {
		parts = append(parts, sum.ProgramError)
		if line := firstLine(stderr); line != "" {
			parts = append(parts, line)
		}
	}
	for _, f := range sum.Header.Findings {
		if old.Add(f) == 0 {
			continue
		}
		o.Findings = append(o.Findings, f)
		p := string(f.Kind) + ": " + firstLine(f.Message)
		if len(f.Ops) > 0 && f.Ops[0].Site != "" {
			p += " at " + f.Ops[0].Site
		}
		parts = append(parts, p)
	}
	if len(parts) > 0 {
		o.Failed, o.Evidence = true, strings.Join(parts, "; ")
	}
	return o
}

// matchedFrom reports whether rank's receive or probe seq matched (found)
// a message of rank src.
func matchedFrom(r *trace.Reader, rank int, seq uint64, src int) bool {
	if rank < 0 || rank >= r.Ranks() {
		return false
	}
	c := r.Rank(rank)
	var ev trace.Event
	for c.Next(&ev) {
		if ev.Kind == trace.KindDone && ev.Seq == seq {
			if ev.Op == trace.OpProbe || ev.Op == trace.OpIprobe {
				return replay.ProbeFound(&ev) && int(ev.Source) == src
			}
			return int(ev.MatchRank) == src
		}
	}
	return false
}

// anySourceCalls yields in call order the seqs of rank's calls the shim
// counts for P2PTRACE_FORCE_MATCH, as the trace holds them: its receives
// from MPI_ANY_SOURCE (Recv, Irecv, a persistent receive's Start, the
// receive half of a Sendrecv), at their post, and its probes from
// MPI_ANY_SOURCE that found a message (every Probe, an Iprobe that
// answered yes; an MPI_Mprobe and an MPI_Improbe that found a message are
// those in the trace, recorder/mpi/mprobe.go, and the shim counts them so),
// at their done. An Iprobe's done comes right after its
// post (it never blocks): the order is the calls'. An Iprobe that answered
// no counts for neither: how often a program polls depends on timing.
func anySourceCalls(r *trace.Reader, rank int) iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		if rank < 0 || rank >= r.Ranks() {
			return
		}
		c := r.Rank(rank)
		var ev trace.Event
		probes := map[uint64]bool{} // AnySource probes posted, not done
		for c.Next(&ev) {
			switch {
			case ev.Kind == trace.KindPost && (ev.Op == trace.OpRecv || ev.Op == trace.OpIrecv) && ev.Peer == trace.AnySource:
				if !yield(ev.Seq) {
					return
				}
			case ev.Kind == trace.KindPost && replay.IsAnySourceProbe(&ev):
				probes[ev.Seq] = true
			case ev.Kind == trace.KindDone && probes[ev.Seq]:
				delete(probes, ev.Seq)
				if replay.ProbeFound(&ev) && !yield(ev.Seq) {
					return
				}
			}
		}
	}
}

// anySourceOrdinal is the ordinal among rank's counted calls
// (anySourceCalls) of its receive or probe seq.
func anySourceOrdinal(r *trace.Reader, rank int, seq uint64) (int, bool) {
	n := 0
	for s := range anySourceCalls(r, rank) {
		if s == seq {
			return n, true
		}
		n++
	}
	return 0, false
}

// nthAnySource is the seq of rank's n-th counted call (anySourceCalls).
func nthAnySource(r *trace.Reader, rank, n int) (uint64, bool) {
	for s := range anySourceCalls(r, rank) {
		if n == 0 {
			return s, true
		}
		n--
	}
	return 0, false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
