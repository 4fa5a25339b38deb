package main

import (
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// TestOlderTraceWithProseFindingsStillOpens: a trace written before
// structured findings (no findings_version, findings as prose in the
// message) shows its prose and checks as any trace.
func TestOlderTraceWithProseFindingsStillOpens(t *testing.T) {
	path := smallTrace(t, t.TempDir(), trace.StatusHung)
	prose := "hang: no rank can progress; rank 1 waits on rank 0, which has finished"
	if err := trace.UpdateHeader(path, func(h *trace.Header) {
		h.FindingsVersion, h.Findings, h.Message = 0, nil, prose
	}); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "show", path)
	if code != 0 || !strings.Contains(out, "message:         "+prose) {
		t.Fatalf("show: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCmd(t, "check", path); code != 0 || out != "no findings\n" {
		t.Fatalf("check: exit %d\n%s%s", code, out, errs)
	}
	sum, err := recorder.Summarize(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.Text(), "findings while recording (as an older p2ptrace wrote them):\n  "+prose) || sum.Clean() {
		t.Fatalf("summary of an older trace:\n%s", sum.Text())
	}
}

// TestNewerFindingsVersionIsRefused: findings of a version this build does
// not know are refused with a message naming both versions (exit 2).
func TestNewerFindingsVersionIsRefused(t *testing.T) {
	path := smallTrace(t, t.TempDir(), trace.StatusComplete)
	if err := trace.UpdateHeader(path, func(h *trace.Header) { h.FindingsVersion = 99 }); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"show", "check", "replay"} {
		code, out, errs := runCmd(t, cmd, path)
		if code != 2 || out != "" || !strings.Contains(errs, "its recorded findings are of version 99, newer than this p2ptrace supports (1); upgrade p2ptrace") {
			t.Errorf("%s: exit %d\n%s%s", cmd, code, out, errs)
		}
	}
}

// TestCheckOfCrashedTraceExitsOne: the crash the recording found is a
// finding of check, whatever the battery finds.
func TestCheckOfCrashedTraceExitsOne(t *testing.T) {
	path := smallTrace(t, t.TempDir(), trace.StatusComplete)
	if err := trace.UpdateHeader(path, func(h *trace.Header) {
		h.Status = trace.StatusCrashed
		h.Findings = append(h.Findings, verdictCrash())
	}); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "check", path)
	if code != 1 || !strings.Contains(out, "[1] crash (cause: program)\n    rank 1 crashed: panic: boom (at ring/main.go:31)\n    rank 1 op 2: Wait at ring/main.go:31") {
		t.Fatalf("check of a crashed trace: exit %d\n%s%s", code, out, errs)
	}
}

func verdictCrash() verdict.Finding {
	return verdict.New(verdict.Crash, []int{1}, "rank 1 crashed: panic: boom (at ring/main.go:31)",
		verdict.OpRef{Rank: 1, Seq: 2, Op: "Wait", Peer: -1, Tag: -1, Site: "ring/main.go:31", Call: "Wait"})
}
