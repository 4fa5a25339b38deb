package recorder

import (
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/verdict"
)

// TestJudgeOutcome pins how a re-run with a forced match is judged: a run
// in which the forced match did not happen is no evidence if it only hung
// (the pinned receive waited for a message another receive had taken:
// testdata/mpi/anysource-irecv-pair), but a failure of another kind, or
// any failure once the match happened, is evidence.
func TestJudgeOutcome(t *testing.T) {
	hang := verdict.New(verdict.Hang, []int{0}, "every rank blocked in MPI or finished, no call for 2s",
		verdict.OpRef{Rank: 0, Op: "MPI_Waitall", Site: "pair.c:31"})
	crash := verdict.New(verdict.Crash, []int{1}, "rank 1 killed by SIGSEGV", verdict.OpRef{Rank: 1, Op: "MPI_Recv", Site: "pair.c:40"})
	summary := func(programError string, fs ...verdict.Finding) *Summary {
		s := &Summary{ProgramError: programError}
		s.Header.Findings = fs
		return s
	}
	for _, c := range []struct {
		name     string
		sum      *Summary
		matched  bool
		illegal  bool
		evidence string // "" when not failed
	}{
		{"not matched, clean", summary(""), false, true, ""},
		{"not matched, hung", summary("", hang), false, true, ""},
		{"matched, hung", summary("", hang), true, false, "hang: every rank blocked in MPI or finished, no call for 2s at pair.c:31"},
		{"not matched, crashed", summary("", hang, crash), false, false, "hang: every rank blocked in MPI or finished, no call for 2s at pair.c:31; crash: rank 1 killed by SIGSEGV at pair.c:40"},
		{"not matched, exit status", summary("exit status 1"), false, false, "exit status 1"},
		{"matched, clean", summary(""), true, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := judgeOutcome(c.sum, "", nil, c.matched)
			if o.Illegal != c.illegal || o.Failed != (c.evidence != "") || o.Evidence != c.evidence {
				t.Errorf("got %+v, want illegal %v, evidence %q", o, c.illegal, c.evidence)
			}
		})
	}
	// What the recording had already is no evidence of the forced order.
	o := judgeOutcome(summary("", crash), "", []verdict.Finding{crash}, true)
	if o.Failed || strings.Contains(o.Evidence, "crash") {
		t.Errorf("a finding the recording had: %+v", o)
	}
}
