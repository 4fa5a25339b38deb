package verdict

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Causes of a finding.
const (
	CauseProgram = "program" // a latent bug of the program
	CauseFault   = "fault"   // explained by an injected fault
)

// Version is the version of the structured findings a trace header stores
// (trace.Header.FindingsVersion). Readers refuse a newer one.
const Version = 1

// OpRef names one op of a finding.
type OpRef struct {
	Rank int    `json:"rank"`
	Seq  uint64 `json:"seq"`
	Op   string `json:"op"`
	Peer int    `json:"peer"`
	Tag  int    `json:"tag"`
	Site string `json:"site"` // relative file:line
	// Call describes the call, e.g. "Send to rank 1 tag 0 (4194304 bytes)".
	Call string `json:"call,omitempty"`
	// Untraced: the call is not an op of the trace (Seq means nothing): one
	// the MPI library refused, the call a rank died or was blocked in as
	// its segment says, a one-sided access, a call that made an object.
	Untraced bool `json:"untraced,omitempty"`
}

// Blocked is one rank of a stuck run: the call it is in, and the message
// ops that call waits for (when they are not the call itself).
type Blocked struct {
	Rank    int     `json:"rank"`
	Call    OpRef   `json:"call"`
	Waiting []OpRef `json:"waiting,omitempty"`
	// Polls says the rank is not blocked but polls (Test, Iprobe) without
	// success: a livelock.
	Polls bool `json:"polls,omitempty"`
}

// Finding is one thing a run got wrong.
type Finding struct {
	Kind  Kind    `json:"kind"`
	Ranks []int   `json:"ranks"`
	Ops   []OpRef `json:"ops"`
	Cause string  `json:"cause"`
	Fault string  `json:"fault,omitempty"` // the injection that explains it (cause fault)
	// RevealedBy is the fault plan of the run that showed the finding ("" = as recorded).
	RevealedBy string `json:"revealed_by,omitempty"`
	Message    string `json:"message"`
	Hint       string `json:"hint"`
	// Stuck runs: the wait-for cycle (ranks in order, the first repeated at
	// the end), each blocked rank, and the nearest unmatched candidates.
	Cycle      []int     `json:"cycle,omitempty"`
	Blocked    []Blocked `json:"blocked,omitempty"`
	Candidates []string  `json:"candidates,omitempty"`
	// Values of corrupted data (when the trace holds payloads): the index of
	// the first differing element, of type Dtype, and a window of elements
	// from WindowStart: what the receiver got and what was sent.
	FirstDiff   *int64   `json:"first_diff,omitempty"`
	Dtype       string   `json:"dtype,omitempty"`
	WindowStart *int64   `json:"window_start,omitempty"`
	Got         []string `json:"got,omitempty"`
	Want        []string `json:"want,omitempty"`
	// Seed is the replay seed that showed the finding (with --explore, the first).
	Seed *uint64 `json:"seed,omitempty"`
	// Collective names the collective call a collective-mismatch is about.
	Collective *CollectiveCall `json:"collective,omitempty"`
}

// CollectiveCall names one collective call of a communicator: the Call-th
// (from 1) that its members make on communicator Comm (0: the world).
type CollectiveCall struct {
	Comm int    `json:"comm"`
	Call uint64 `json:"call"`
}

// New returns a finding of kind with its hint, caused by the program.
func New(kind Kind, ranks []int, message string, ops ...OpRef) Finding {
	return Finding{Kind: kind, Ranks: ranks, Ops: ops, Cause: CauseProgram, Message: message, Hint: kind.Hint()}
}

// Signature identifies a finding across runs and doors: its kind and the
// ranks, calls and sites of its ops.
func (f *Finding) Signature() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	for _, o := range f.Ops {
		fmt.Fprintf(&b, "|%d:%s:%s", o.Rank, o.Op, o.Site)
	}
	return b.String()
}

// Restates reports whether f, a finding of a replay as recorded (no fault),
// is rec again: a finding the recording itself made (an MPI error), of the
// same kind, whose every op is one of f's (same rank and site). The two
// name their ops differently (the recording by the MPI call, the replay by
// the op and its peer), so their signatures differ: a truncation MPI
// reported at a receive and the replay's truncation of the same receive,
// with its sender, are one bug.
func (f *Finding) Restates(rec *Finding) bool {
	if f.Kind != rec.Kind || f.RevealedBy != "" || len(rec.Ops) == 0 {
		return false
	}
	for _, o := range rec.Ops {
		if o.Site == "" || !slices.ContainsFunc(f.Ops, func(p OpRef) bool { return p.Rank == o.Rank && p.Site == o.Site }) {
			return false
		}
	}
	return true
}

// Explains reports whether rec is an effect of f, the same bug seen again
// by another door, so that f alone, saying both, is the verdict. Both come
// from the same run (RevealedBy), every op of rec is one of f's calls (same
// rank and site), and:
//   - f a collective-mismatch, rec an MPI error the recording reported (a
//     truncation or an invalid call) or a crash: the ranks failed or died
//     in the mismatched call. A library that checks a collective fails the
//     member whose arguments disagree (Open MPI fails the smaller side of
//     a size mismatch with MPI_ERR_TRUNCATE; gloo aborts one rank of an
//     all_reduce whose sizes differ, and the other's call raises or is
//     killed);
//   - f a buffer-overlap, rec an in-flight-mutation: the pending receive
//     that overlaps the send wrote its buffer;
//   - f a buffer-overrun, rec a crash: the rank died in the call that
//     reads or writes past its variable (past the top of its stack);
//   - f an invalid-call, rec a crash: the rank died in the call whose
//     arguments the MPI standard forbids, which its library did not check
//     (Open MPI's MPI_Scatter with a count of -1 reads wild memory);
//   - f a collective-mismatch or a type-mismatch, rec a host-type-mismatch
//     of one of its calls: the datatype that differs from the other side's
//     is the one that does not name its variable's type, which names the
//     culprit.
func (f *Finding) Explains(rec *Finding) bool {
	_, ok := f.explains(rec)
	return ok
}

// explains is Explains and what f's message adds of rec when it does.
func (f *Finding) explains(rec *Finding) (string, bool) {
	var note string
	switch {
	case f.Kind == CollectiveMismatch && (rec.Kind == Truncation || rec.Kind == InvalidCall || rec.Kind == Crash):
		note = "so the call failed: " + rec.Message
	case f.Kind == BufferOverlap && rec.Kind == InFlightMutation:
		note = "so the send's buffer changed before the send completed (its payload hashes differ)"
	case (f.Kind == BufferOverrun || f.Kind == InvalidCall) && rec.Kind == Crash:
		note = "so the call died of it: " + rec.Message
	case (f.Kind == CollectiveMismatch || f.Kind == TypeMismatch) && rec.Kind == HostTypeMismatch:
		note = "the wrong datatype: " + rec.Message
	case f.Kind == ReleasedBuffer && (rec.Kind == InFlightMutation || rec.Kind == RecvBufferWrite):
		// The memory's next owner wrote it: the change is the release's
		// effect. Only the pending call must be the same: the call that saw
		// the change (its Wait) is no release.
		note = "so the buffer changed before the operation completed"
		if len(rec.Ops) == 0 || rec.RevealedBy != f.RevealedBy {
			return "", false
		}
		o := rec.Ops[0]
		if o.Site == "" || !slices.ContainsFunc(f.Ops, func(p OpRef) bool { return p.Rank == o.Rank && p.Site == o.Site }) {
			return "", false
		}
		return note, true
	default:
		return "", false
	}
	if len(rec.Ops) == 0 || rec.RevealedBy != f.RevealedBy {
		return "", false
	}
	for _, o := range rec.Ops {
		if o.Site == "" || !slices.ContainsFunc(f.Ops, func(p OpRef) bool { return p.Rank == o.Rank && p.Site == o.Site }) {
			return "", false
		}
	}
	return note, true
}

// OnePerBug is what a door keeps of the findings it made: each bug's
// effects said in its finding (FoldEffects), and one finding of each
// signature (Dedup: a bug at a call in a loop is said once).
func OnePerBug(fs []Finding) []Finding { return Dedup(FoldEffects(fs)) }

// FoldEffects returns fs without the findings that another of fs explains
// (see Explains), each said in the message of the first that explains it
// (a note said once, however many findings alike it explains). Findings
// that explain nothing and are explained by none are unchanged and keep
// their order. It reuses fs's array. Its cost is linear in len(fs) for
// findings of distinct calls: a finding is compared only with those that
// name its first op's rank and site (an explainer names every op of what
// it explains), so a merge's thousands of findings are no quadratic step.
func FoldEffects(fs []Finding) []Finding {
	type call struct {
		rank int
		site string
	}
	byCall := map[call][]int{} // the findings that name each call, in order
	for j := range fs {
		if !fs[j].explainsSome() {
			continue
		}
		for _, o := range fs[j].Ops {
			if o.Site == "" {
				continue
			}
			k := call{o.Rank, o.Site}
			if js := byCall[k]; len(js) == 0 || js[len(js)-1] != j {
				byCall[k] = append(js, j)
			}
		}
	}
	explained := make([]bool, len(fs))
	for i := range fs {
		if len(fs[i].Ops) == 0 || fs[i].Ops[0].Site == "" {
			continue // explains requires every op's site
		}
		for _, j := range byCall[call{fs[i].Ops[0].Rank, fs[i].Ops[0].Site}] {
			if i == j || explained[j] {
				continue
			}
			if note, ok := fs[j].explains(&fs[i]); ok {
				if !strings.Contains(fs[j].Message, "; "+note) {
					fs[j].Message += "; " + note
				}
				explained[i] = true
				break
			}
		}
	}
	out := fs[:0]
	for i, f := range fs {
		if !explained[i] {
			out = append(out, f)
		}
	}
	return out
}

// explainsSome reports whether f's kind explains another's (see explains).
func (f *Finding) explainsSome() bool {
	switch f.Kind {
	case CollectiveMismatch, BufferOverlap, BufferOverrun, TypeMismatch, ReleasedBuffer, InvalidCall:
		return true
	}
	return false
}

// callKey identifies the one call instance a finding is about, when its
// kind has one: a collective-mismatch's collective call. Its members
// disagree once, however a run's arrival order paired them (the engine
// compares each member with the first to enter), so a replay under delays
// that names another pair of the same call finds the same bug.
func (f *Finding) callKey() string {
	if f.Kind == CollectiveMismatch && f.Collective != nil {
		return fmt.Sprintf("%s@%d:%d", f.Kind, f.Collective.Comm, f.Collective.Call)
	}
	return ""
}

// Set accumulates findings, keeping the first of each signature in the
// order added, and the first about each collective call of a
// collective-mismatch. Its zero value is empty and ready to use.
type Set struct {
	seen map[string]bool
	list []Finding
}

// Add adds the findings that are new (their signature, and the call a
// collective-mismatch is about, not seen before) and reports how many were.
func (s *Set) Add(fs ...Finding) int {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	n := 0
	for _, f := range fs {
		sig, call := f.Signature(), f.callKey()
		dup := s.seen[sig] || call != "" && s.seen[call]
		s.seen[sig] = true
		if call != "" {
			s.seen[call] = true
		}
		if !dup {
			s.list = append(s.list, f)
			n++
		}
	}
	return n
}

// Findings returns the findings kept, in the order added.
func (s *Set) Findings() []Finding { return s.list }

// Dedup keeps the first finding of each signature (and of each collective
// call of a collective-mismatch: see Set), in order.
func Dedup(fs []Finding) []Finding {
	var s Set
	s.Add(fs...)
	return s.list
}

// RankList names ranks in a finding's words: "rank 1", or "ranks 0, 2".
func RankList(ranks []int) string {
	if len(ranks) == 1 {
		return "rank " + strconv.Itoa(ranks[0])
	}
	parts := make([]string, len(ranks))
	for i, r := range ranks {
		parts[i] = strconv.Itoa(r)
	}
	return "ranks " + strings.Join(parts, ", ")
}
