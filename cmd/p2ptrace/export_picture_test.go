package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/browsertest"
	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
)

var (
	laneRe    = regexp.MustCompile(`<rect class="lane-bg( odd)?( hl)?" data-rank="(\d+)"`)
	errorsRe  = regexp.MustCompile(`(?s)<pre id="errors">(.*?)</pre>`)
	graphRe   = regexp.MustCompile(`<div class="graph" data-i="0" id="graph-1"( hidden="")?>`)
	cycleNode = regexp.MustCompile(`<g class="gnode cycle" data-rank="(\d+)">`)
	tagRe     = regexp.MustCompile(`<[^>]*>`)
)

// pageView is what a person sees of a page, read from its DOM after its
// scripts ran.
type pageView struct {
	dom         string
	lanes       int   // timeline lanes
	highlighted []int // ranks whose lane is highlighted
	text        string
}

func viewPage(t *testing.T, browser, page string) pageView {
	t.Helper()
	dom := browsertest.DumpDOM(t, browser, page)
	v := pageView{dom: dom, text: tagRe.ReplaceAllString(dom, "")}
	for _, m := range laneRe.FindAllStringSubmatch(dom, -1) {
		v.lanes++
		if m[2] != "" {
			r, _ := strconv.Atoi(m[3])
			v.highlighted = append(v.highlighted, r)
		}
	}
	if !strings.Contains(dom, `data-ready="1"`) {
		t.Errorf("%s: the page's script did not finish", page)
	}
	if m := errorsRe.FindStringSubmatch(dom); m == nil || strings.TrimSpace(m[1]) != "" || strings.Contains(dom, `data-errors="1"`) {
		t.Errorf("%s: script errors on the page: %q", page, m)
	}
	return v
}

// TestExportHTMLInBrowser: the pages of testdata's deadlock (export), race
// and corruption (check --html) traces in headless Chromium: one lane per
// rank, the selected finding's ranks highlighted (the deadlock's cycle),
// its file:line visible, the deadlock's wait-for graph shown, no script
// errors. With P2PTRACE_SCREENSHOT=FILE.png it also saves the deadlock's
// page as the README's screenshot.
func TestExportHTMLInBrowser(t *testing.T) {
	browser := browsertest.RequireChromium(t)
	root := scenariotest.ModuleRoot(t)
	dir := t.TempDir()

	// The deadlock: export of the recorded trace (replayed as recorded).
	code, out, stderr, db := recordTrain(t, "headtohead-large")
	if code != exitFindings {
		t.Fatalf("record: exit %d\n%s\n%s", code, out, stderr)
	}
	page := filepath.Join(dir, "deadlock.html")
	if code, _, stderr := runCmd(t, "export", "--format", "html", "-o", page, db); code != exitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	v := viewPage(t, browser, page)
	if v.lanes != 2 || !slices.Equal(v.highlighted, []int{0, 1}) {
		t.Errorf("deadlock: %d lanes, highlighted %v; want 2 lanes, the cycle's ranks 0 and 1", v.lanes, v.highlighted)
	}
	for _, marker := range []string{"send-a", "send-b"} {
		if site := scenariotest.Culprit(t, root, "headtohead-large", marker); !strings.Contains(v.text, "at "+site) {
			t.Errorf("deadlock: the page does not show %s", site)
		}
	}
	if m := graphRe.FindStringSubmatch(v.dom); m == nil || m[1] != "" {
		t.Errorf("deadlock: the wait-for graph of the selected finding is not shown: %q", m)
	}
	var cycle []string
	for _, m := range cycleNode.FindAllStringSubmatch(v.dom, -1) {
		cycle = append(cycle, m[1])
	}
	if !slices.Equal(cycle, []string{"0", "1"}) || !strings.Contains(v.text, "blocked in Send to rank 1 tag 0") {
		t.Errorf("deadlock: wait-for graph cycle nodes %v", cycle)
	}
	// Hovering an op shows its envelope, bytes and site.
	tip := "rank 0 op 0: Send to rank 1 tag 0\nbytes 4194304\nposted 0 ns, done never completed\nsite " + scenariotest.Culprit(t, root, "headtohead-large", "send-a")
	if !strings.Contains(v.dom, `class="fop" data-r="0" data-i="0" data-tip="`+tip+`"`) {
		t.Errorf("the hover text of rank 0's Send is not %q", tip)
	}
	if png := os.Getenv("P2PTRACE_SCREENSHOT"); png != "" {
		browsertest.Screenshot(t, browser, page, png, 1280, 720)
	}

	// The race and the corruption: check --html.
	// The recording's own findings come first in check's report (the
	// in-flight mutation), then the battery's (the corrupted data); the race
	// is the one whose re-run fails (anysource-assume).
	for _, tc := range []struct {
		name, kind, also string
		lanes            int
		ranks            []int
		culprits         []string
	}{
		{"anysource-assume", "message-race", "", 3, []int{0, 1, 2}, []string{"recv-any", "send"}},
		{"isend-mutate", "in-flight-mutation", "[2] corrupted-data", 2, []int{0}, []string{"isend", "wait", "recv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, db := recordTrain(t, tc.name)
			page := filepath.Join(dir, tc.name+".html")
			code, out, stderr := runCmd(t, "check", "--html", page, db)
			if code != exitFindings || !strings.Contains(out, tc.kind) {
				t.Fatalf("check: exit %d\n%s\n%s", code, out, stderr)
			}
			v := viewPage(t, browser, page)
			if v.lanes != tc.lanes || !slices.Equal(v.highlighted, tc.ranks) {
				t.Errorf("%d lanes, highlighted %v; want %d lanes, ranks %v", v.lanes, v.highlighted, tc.lanes, tc.ranks)
			}
			if !strings.Contains(v.text, "[1] "+tc.kind) || !strings.Contains(v.text, tc.also) {
				t.Errorf("the page does not list %s first, and %q", tc.kind, tc.also)
			}
			for _, marker := range tc.culprits {
				if site := scenariotest.Culprit(t, root, tc.name, marker); !strings.Contains(v.text, site) {
					t.Errorf("the page does not show %s", site)
				}
			}
			if !strings.Contains(v.dom, `class="fop"`) {
				t.Errorf("the finding's ops are not marked on the timeline")
			}
		})
	}
}

// TestExportDOT: the wait-for graph of the recorded deadlock names both
// blocked sends with file:line and the cycle, and Graphviz renders it (when
// dot is installed; on CI it must be).
func TestExportDOT(t *testing.T) {
	root := scenariotest.ModuleRoot(t)
	_, _, _, db := recordTrain(t, "headtohead-large")
	code, out, stderr := runCmd(t, "export", "--format", "dot", db)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"digraph waitfor {",
		`f1_r0 [label="rank 0\nblocked in Send to rank 1 tag 0\nat ` + scenariotest.Culprit(t, root, "headtohead-large", "send-a") + `", color=red, penwidth=2];`,
		`f1_r1 [label="rank 1\nblocked in Send to rank 0 tag 0\nat ` + scenariotest.Culprit(t, root, "headtohead-large", "send-b") + `", color=red, penwidth=2];`,
		`f1_r0 -> f1_r1 [label="waits for", color=red, penwidth=2];`,
		`f1_r1 -> f1_r0 [label="waits for", color=red, penwidth=2];`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dot output lacks %q:\n%s", want, out)
		}
	}
	dot, err := exec.LookPath("dot")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("dot not on PATH, and CI is set: install graphviz")
		}
		t.Skip("skipping the rendering: dot not on PATH (apt-get install graphviz)")
	}
	render := exec.Command(dot, "-Tsvg")
	render.Stdin = strings.NewReader(out)
	svg, err := render.Output()
	if err != nil {
		t.Fatalf("dot -Tsvg: %v", err)
	}
	if !strings.Contains(string(svg), "<svg") || !strings.Contains(string(svg), "blocked in Send to rank 1 tag 0") {
		t.Fatalf("dot -Tsvg:\n%s", svg)
	}
}

// TestExportHTMLAtScale (on demand: P2PTRACE_SCALE=1): 1,024 ranks and
// over a million events. The page draws 1,024 lanes as densities, shows
// single ops once zoomed in (a window in the address), and has no script
// errors. It logs the page size and the times.
func TestExportHTMLAtScale(t *testing.T) {
	if os.Getenv("P2PTRACE_SCALE") == "" {
		t.Skip("on demand: P2PTRACE_SCALE=1 (records 1,024 ranks, about a minute)")
	}
	browser := browsertest.RequireChromium(t)
	start := time.Now()
	code, out, stderr, db := recordTrain(t, "ring", "-ranks", "1024", "-iters", "170", "-bytes", "64")
	if code != exitOK {
		t.Fatalf("record: exit %d\n%s\n%s", code, out, stderr)
	}
	recorded := time.Since(start)
	page := filepath.Join(t.TempDir(), "big.html")
	start = time.Now()
	if code, _, stderr := runCmd(t, "export", "--format", "html", "-o", page, db); code != exitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	exported := time.Since(start)
	fi, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	v := viewPage(t, browser, page)
	if v.lanes != 1024 || !strings.Contains(v.dom, `data-mode="density"`) {
		t.Errorf("whole run: %d lanes, want 1024 drawn as densities", v.lanes)
	}
	ms := regexp.MustCompile(`data-render-ms="(\d+)"`).FindStringSubmatch(v.dom)
	zoomed := viewPage(t, browser, page+"#window=100000-100300")
	if !strings.Contains(zoomed.dom, `data-mode="ops"`) || !strings.Contains(zoomed.dom, `class="op send"`) {
		t.Errorf("zoomed to 300 ns: no single ops drawn")
	}
	t.Logf("1024 ranks: record %v, export %v, page %.1f MB, page ready after %s ms", recorded.Round(time.Millisecond), exported.Round(time.Millisecond), float64(fi.Size())/1e6, ms[1])
}
