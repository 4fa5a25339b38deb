package bugview_test

import (
	"bytes"
	"github.com/p2ptrace/p2ptrace/verdict"
	"regexp"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/bugview"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
	"github.com/p2ptrace/p2ptrace/replay"
)

// events is an in-memory trace: rank r's events in order.
type events struct {
	ranks [][]trace.Event
	pos   []int
}

func (e *events) Ranks() int { return len(e.ranks) }
func (e *events) Err() error { return nil }
func (e *events) Next(r int, ev *trace.Event) bool {
	if e.pos[r] >= len(e.ranks[r]) {
		return false
	}
	*ev = e.ranks[r][e.pos[r]]
	e.pos[r]++
	return true
}

// deadlock: three ranks in a ring of blocked Sends (rank 2 sends to 0).
func deadlock(t *testing.T) *bugview.Model {
	t.Helper()
	src := &events{pos: make([]int, 3)}
	var fs []replay.Finding
	f := replay.Finding{Kind: verdict.Deadlock, Ranks: []int{0, 1, 2}, Cycle: []int{0, 1, 2, 0}, Cause: replay.CauseProgram,
		Message: "deadlock: no rank can progress", Candidates: []string{`rank 2 sent tag 7 to rank 0; rank 0 waits for "Recv"`}}
	for r := range 3 {
		src.ranks = append(src.ranks, []trace.Event{
			{Kind: trace.KindPost, Rank: int32(r), Seq: 0, Op: trace.OpBarrier, PostVT: 0},
			{Kind: trace.KindDone, Rank: int32(r), Seq: 0, Op: trace.OpBarrier, DoneVT: 100},
			{Kind: trace.KindPost, Rank: int32(r), Seq: 1, Op: trace.OpSend, Peer: int32((r + 1) % 3), Bytes: 64, PostVT: 100, Site: 1},
		})
		f.Ops = append(f.Ops, replay.OpRef{Rank: r, Seq: 1, Op: "Send", Peer: (r + 1) % 3, Site: "main.go:9"})
	}
	fs = append(fs, f)
	m, err := bugview.Build("ring.db", trace.Header{Command: []string{"./ring"}, Status: trace.StatusHung}, src,
		func(uintptr) string { return "main.go:9" }, bugview.FromReplay(fs), "the replay as recorded")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBuildAndGraph(t *testing.T) {
	m := deadlock(t)
	if m.Ranks != 3 || m.Ops != 6 || m.EndVT != 100 || len(m.Lanes) != 3 || m.Lanes[2].Done[1] != -1 || m.Lanes[0].Peer[0] != -2 {
		t.Fatalf("model %+v", m)
	}
	f := m.Findings[0]
	if f.Graph == nil || len(f.Graph.Nodes) != 3 || len(f.Graph.Edges) != 3 || !f.Graph.Edges[0].InCycle || f.Graph.Nodes[1].Call != "Send to rank 2 tag 0" {
		t.Fatalf("graph %+v", f.Graph)
	}
	if got := f.Highlight; len(got) != 3 {
		t.Fatalf("highlight %v", got)
	}
}

func TestDOTQuotes(t *testing.T) {
	var b bytes.Buffer
	if err := bugview.WriteDOT(&b, deadlock(t)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`f1_r2 -> f1_r0 [label="waits for", color=red, penwidth=2];`, `label="unmatched candidate:\nrank 2 sent tag 7 to rank 0; rank 0 waits for \"Recv\""`} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

// TestHTMLSelfContained: no network: no external script, style, font or
// image, and the data cannot end its script element; same model, same bytes.
func TestHTMLSelfContained(t *testing.T) {
	m := deadlock(t)
	m.Command = "./ring </script><script>alert(1)</script>"
	var a, b bytes.Buffer
	if err := bugview.WriteHTML(&a, m); err != nil {
		t.Fatal(err)
	}
	if err := bugview.WriteHTML(&b, m); err != nil {
		t.Fatal(err)
	}
	page := a.String()
	if page != b.String() {
		t.Fatal("two renderings of one model differ")
	}
	if ext := regexp.MustCompile(`(?i)(src|href)\s*=|@import|url\((?:["']?)http|<link`).FindString(page); ext != "" {
		t.Errorf("external reference %q in the page", ext)
	}
	if strings.Count(page, "<script") != 2 || strings.Contains(page, "<script>alert") {
		t.Errorf("the command line broke out of its element")
	}
	if !strings.Contains(page, `<g class="gnode cycle" data-rank="2">`) {
		t.Errorf("no wait-for graph")
	}
}
