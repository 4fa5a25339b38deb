package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/scenariotest"
	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// parityCases are the programs of testdata/train with the arguments the
// scenarios use.
var parityCases = [][]string{
	{"pingpong"}, {"headtohead-small"}, {"headtohead-large"}, {"ordered-exchange"}, {"sendrecv-exchange"},
	{"wrong-rank"}, {"wrong-tag"}, {"send-no-recv"}, {"send-no-recv", "-bytes", "4096"},
	{"isend-mutate"}, {"isend-nowait"}, {"isend-nowait", "-mode", "leak"}, {"isend-nowait", "-mode", "free"},
	{"irecv-read-early"}, {"matrix-scatter"}, {"pipeline-chunks"}, {"pipeline-chunks", "-chunks", "8"},
	{"anysource-race"}, {"anysource-assume"}, {"nccl-headtohead"}, {"nccl-headtohead", "-n", "1048576"}, {"nccl-group"},
	{"nccl-count-mismatch"}, {"ring", "-ranks", "3", "-iters", "4", "-bytes", "1048576"},
	{"buffer-overlap"}, {"buffer-overlap", "-mode", "sendrecv"}, {"buffer-overlap", "-mode", "fixed"},
	{"alltoall", "-ranks", "12", "-iters", "2"},
	{"ready-send"}, {"ready-send", "-mode", "fixed"},
}

// TestDoorsGiveOneVerdict runs every program of testdata/train through two
// doors and compares their finding sets (kind, ranks, lines): `p2ptrace
// record` then `p2ptrace check` (replay.CheckTrace), and harness.Run on the
// program's own rank function inside go test. The harness door compiles
// the programs as packages through go's -overlay (the sources are read, not
// copied into the tree: package main becomes an importable package whose
// gpu.Launch calls harness.Run), so both doors run the same code, line for
// line.
func TestDoorsGiveOneVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and records every scenario program; skipped with -short")
	}
	root := scenariotest.ModuleRoot(t)
	harnessDoor := runHarnessDoor(t, root)

	bin := scenariotest.Build(t, root)
	dir := t.TempDir()
	withFindings := 0
	for i, c := range parityCases {
		id := strings.Join(c, " ")
		out := filepath.Join(dir, fmt.Sprintf("%d.db", i))
		_, err := recorder.Record(context.Background(), recorder.Options{Program: filepath.Join(bin, c[0]), Args: c[1:], Output: out, Stdout: io.Discard, Stderr: io.Discard})
		if err != nil && !strings.Contains(err.Error(), "the program failed") {
			t.Fatalf("record %s: %v", id, err)
		}
		tr, err := replay.OpenTrace(out)
		if err != nil {
			t.Fatal(err)
		}
		var opts replay.CheckOptions
		opts.Rerun, opts.NoRerun = recorder.Rerunner(context.Background(), tr)
		rep, err := replay.CheckTrace(tr, opts)
		tr.Close()
		if err != nil {
			t.Fatalf("check %s: %v", id, err)
		}
		recorded := verdictSet(rep.Findings)
		harnessed, ok := harnessDoor[id]
		if !ok {
			t.Fatalf("%s: the harness door did not run it", id)
		}
		if !slices.Equal(recorded, harnessed) {
			t.Errorf("%s: the doors disagree\n  record+check: %q\n  harness:      %q", id, recorded, harnessed)
		}
		if len(recorded) > 0 {
			withFindings++
		}
		t.Logf("%s: %q", id, recorded)
	}
	// The bugs of the scenarios are there to be found: a door that finds
	// nothing would agree with another that finds nothing.
	if withFindings < 12 {
		t.Errorf("only %d of %d cases have findings", withFindings, len(parityCases))
	}
}

var siteFile = regexp.MustCompile(`[^ ]*/main\.go:`)

// verdictSet is the findings as sorted "kind ranks lines" strings, the
// lines as main.go:LINE (each door names the file from where it ran).
func verdictSet(fs []verdict.Finding) []string {
	var out []string
	for _, f := range fs {
		var lines []string
		for _, o := range f.Ops {
			if o.Site != "" {
				lines = append(lines, siteFile.ReplaceAllString(o.Site, "main.go:"))
			}
		}
		slices.Sort(lines)
		out = append(out, fmt.Sprintf("%s %v %v", f.Kind, f.Ranks, slices.Compact(lines)))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// runHarnessDoor compiles every program as a package (overlay), runs each
// case through harness.Run in a go test of its own, and returns the finding
// sets by case.
func runHarnessDoor(t *testing.T, root string) map[string][]string {
	t.Helper()
	tmp := t.TempDir()
	overlay := map[string]string{}
	add := func(virtual, content string) {
		real := filepath.Join(tmp, fmt.Sprintf("f%d.go", len(overlay)))
		if err := os.WriteFile(real, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(root, virtual)] = real
	}
	names := map[string]bool{}
	for _, c := range parityCases {
		names[c[0]] = true
	}
	var imports, table strings.Builder
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range names {
			if !yield(n) {
				return
			}
		}
	}) {
		src, err := os.ReadFile(filepath.Join(root, "testdata", "train", name, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		add(filepath.Join("internal", "paritygen", name, "main.go"), asPackage(t, name, string(src)))
		add(filepath.Join("internal", "paritygen", name, "hook.go"), hookFile)
		alias := "p_" + strings.ReplaceAll(name, "-", "_")
		fmt.Fprintf(&imports, "\t%s \"github.com/p2ptrace/p2ptrace/internal/paritygen/%s\"\n", alias, name)
		fmt.Fprintf(&table, "\t%q: {%s.Main, &%s.Launch},\n", name, alias, alias)
	}
	cases, _ := json.Marshal(parityCases)
	add(filepath.Join("internal", "paritygen", "run", "run_test.go"), fmt.Sprintf(runnerFile, imports.String(), table.String(), "`"+string(cases)+"`"))
	ov, _ := json.Marshal(map[string]any{"Replace": overlay})
	ovPath := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "harness.json")
	exe := filepath.Join(tmp, "run.test")
	build := exec.Command("go", "test", "-vet=off", "-overlay", ovPath, "-c", "-o", exe, "./internal/paritygen/run/")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the harness door: %v\n%s", err, b)
	}
	// Run from the module root (the package's directory is only virtual).
	cmd := exec.Command(exe, "-test.run", "^TestHarnessDoor$")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "P2PTRACE_PARITY_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the harness door: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var byCase map[string][]verdict.Finding
	if err := json.Unmarshal(b, &byCase); err != nil {
		t.Fatal(err)
	}
	sets := map[string][]string{}
	for id, fs := range byCase {
		sets[id] = verdictSet(fs)
	}
	return sets
}

// asPackage turns a program's main.go into an importable package with the
// same lines: main becomes Main(args), its flags a FlagSet of its own, and
// gpu.Launch the Launch hook (see hookFile); os.Exit ends Main only.
func asPackage(t *testing.T, name, src string) string {
	t.Helper()
	n := strings.Count(src, "\n")
	parses := strings.Contains(src, "flag.Parse()")
	src = strings.Replace(src, "package main", "package prog", 1)
	head := "func Main(args []string) {"
	if parses {
		head += ` flag := flagSet(); defer func() { _ = flag }();`
	}
	src = strings.Replace(src, "func main() {", head, 1)
	src = strings.Replace(src, "flag.Parse()", "flag.Parse(args)", 1)
	src = strings.ReplaceAll(src, "gpu.Launch(", "launch(")
	src = strings.ReplaceAll(src, "os.Exit(", "exit(")
	src = strings.ReplaceAll(src, "fmt.Printf(", "printf(")
	src = strings.ReplaceAll(src, "fmt.Fprintf(os.Stderr, ", "printf(")
	if strings.Count(src, "\n") != n {
		t.Fatalf("%s: the rewrite moved lines", name)
	}
	// The imports the rewrite may leave unused, used after the last line.
	for pkg, use := range map[string]string{"flag": "flag.NewFlagSet", "os": "os.Exit", "fmt": "fmt.Sprint"} {
		if strings.Contains(src, "\t\""+pkg+"\"\n") {
			src += "\nvar _ = " + use + "\n"
		}
	}
	return src
}

// hookFile is the same in every generated package: Launch is set by the
// runner to call harness.Run.
const hookFile = `package prog

import (
	"flag"
	"fmt"
	"os"

	"github.com/p2ptrace/p2ptrace/gpu"
)

// Launch stands for gpu.Launch; the runner sets it.
var Launch func(int, func(*gpu.Rank) error, ...gpu.Option) error

func launch(n int, fn func(*gpu.Rank) error, opts ...gpu.Option) error { return Launch(n, fn, opts...) }

type exited int

func exit(code int) { panic(exited(code)) }

func printf(string, ...any) {}

func flagSet() *flag.FlagSet { return flag.NewFlagSet("prog", flag.ContinueOnError) }

var _, _ = fmt.Sprint, os.Exit
`

// runnerFile runs every case through harness.Run and writes the findings.
const runnerFile = `package run_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/gpu"
	"github.com/p2ptrace/p2ptrace/harness"
	"github.com/p2ptrace/p2ptrace/verdict"
%s)

type prog struct {
	main   func([]string)
	launch *func(int, func(*gpu.Rank) error, ...gpu.Option) error
}

var progs = map[string]prog{
%s}

// quiet records what harness.Run reports instead of failing.
type quiet struct{ testing.TB }

func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (quiet) Logf(string, ...any)   {}
func (quiet) Helper()               {}

func TestHarnessDoor(t *testing.T) {
	var cases [][]string
	if err := json.Unmarshal([]byte(%s), &cases); err != nil {
		t.Fatal(err)
	}
	out := map[string][]verdict.Finding{}
	for _, c := range cases {
		p := progs[c[0]]
		var fs []verdict.Finding
		*p.launch = func(n int, fn func(*gpu.Rank) error, opts ...gpu.Option) error {
			for _, f := range harness.Run(quiet{t}, n, fn, harness.Launch(opts...), harness.Seeds(1)) {
				fs = append(fs, f.Findings...)
			}
			return nil
		}
		func() {
			defer func() { recover() }()
			p.main(c[1:])
		}()
		out[strings.Join(c, " ")] = fs
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("P2PTRACE_PARITY_OUT"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
`
