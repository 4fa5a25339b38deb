package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// torchTrace writes a 2-rank torch.distributed trace (the backend the
// Python recorder writes): rank 0's all_reduce against rank 1's broadcast.
func torchTrace(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "torch.p2ptrace")
	w, err := trace.Create(path, trace.Header{WorldSize: 2, Backend: "torch.distributed gloo (torch 1.13.0a0)"}, trace.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	evs := []trace.Event{
		{Kind: trace.KindPost, Rank: 0, Seq: 0, Op: trace.OpAllreduce, Peer: -1, Tag: 0, Count: 2, Bytes: 16, Stream: int32(trace.ReduceSum), MatchRank: trace.NoRank},
		{Kind: trace.KindPost, Rank: 1, Seq: 0, Op: trace.OpBcast, Peer: 0, Tag: 1, Count: 2, Bytes: 16, MatchRank: trace.NoRank},
	}
	for i := range evs {
		w.Append(&evs[i])
	}
	if err := w.Close(trace.StatusHung, ""); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestShowAndExportNameTorchCalls: show's op table and counts, export's
// Chrome slices and the HTML page's ops name a torch trace's ops as the program called them
// ("all_reduce", "broadcast"), as its findings do; the JSON of show keeps
// the trace op's name ("Allreduce"), for scripts.
func TestShowAndExportNameTorchCalls(t *testing.T) {
	path := torchTrace(t)
	code, out, errOut := runCmd(t, "show", "--events", path)
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"all_reduce", "broadcast"} {
		if !strings.Contains(out, want) {
			t.Errorf("show --events does not name %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Allreduce") || strings.Contains(out, "Bcast") {
		t.Errorf("show --events names a torch op in MPI's words:\n%s", out)
	}
	code, out, errOut = runCmd(t, "show", "--json", "--events", path)
	if code != 0 {
		t.Fatalf("show --json: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"op": "Allreduce"`) && !strings.Contains(out, `"op":"Allreduce"`) {
		t.Errorf("show --json: the op is not the trace op's name:\n%s", out)
	}
	chrome := filepath.Join(t.TempDir(), "t.json")
	if code, _, errOut = runCmd(t, "export", "--format", "chrome", "-o", chrome, path); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(chrome)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name string `json:"name"`
			Ph   string `json:"ph"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var slices []string
	for _, ev := range doc.TraceEvents {
		if ev.Ph == "X" {
			slices = append(slices, ev.Name)
		}
	}
	if strings.Join(slices, " ") != "all_reduce broadcast" {
		t.Errorf("chrome slices %q, want all_reduce broadcast", slices)
	}
	page := filepath.Join(t.TempDir(), "t.html")
	if code, _, errOut = runCmd(t, "export", "--format", "html", "-o", page, path); code != 0 {
		t.Fatalf("export html: exit %d: %s", code, errOut)
	}
	if b, err = os.ReadFile(page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"all_reduce"`) || strings.Contains(string(b), `"Allreduce"`) {
		t.Errorf("the page does not name the ops as torch does (all_reduce)")
	}
}
