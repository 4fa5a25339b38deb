package recorder_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/pytest"
	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// torchScript is the absolute path of testdata/torch/name.py and its source.
func torchScript(t *testing.T, name string) (path, src string) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "testdata", "torch", name+".py"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, string(b)
}

// recordTorch records testdata/torch/name.py as n ranks under real
// processes and returns the trace's path and the recording's error.
func recordTorch(t *testing.T, name string, n int) (string, *recorder.Summary, error) {
	t.Helper()
	pytest.RequireTorch(t)
	script, _ := torchScript(t, name)
	out := filepath.Join(t.TempDir(), name+".db")
	var stdout, stderr bytes.Buffer
	sum, err := recorder.RecordTorch(context.Background(), recorder.MPIOptions{
		Program: pytest.Python, Args: []string{script}, Ranks: n, Output: out,
		HangTimeout: 2 * time.Second, Stdout: &stdout, Stderr: &stderr,
	})
	t.Logf("%s: stdout:\n%s\nstderr:\n%s", name, stdout.String(), stderr.String())
	return out, sum, err
}

func TestRecordTorchHeadToHeadSendIsHung(t *testing.T) {
	path, sum, err := recordTorch(t, "headtohead", 2)
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	if sum.Header.Status != trace.StatusHung {
		t.Fatalf("status %q, want hung; message:\n%s", sum.Header.Status, sum.Header.Message)
	}
	script, src := torchScript(t, "headtohead")
	line := lineOf(t, src, "# both ranks block here")
	msg := sum.Header.Message
	for _, r := range []string{"0", "1"} {
		want := regexp.MustCompile(`rank ` + r + ` blocked in Send to rank \d tag 0 \(64 bytes\) at \S*` + regexp.QuoteMeta(filepath.Base(script)) + `:` + itoa(line) + `\n`)
		if !want.MatchString(msg + "\n") {
			t.Errorf("message does not name rank %s's send at line %d:\n%s", r, line, msg)
		}
	}
	if !strings.Contains(msg, "deadlock: no rank can progress; wait-for cycle: rank 0 -> rank 1 -> rank 0") {
		t.Errorf("message has no wait-for cycle:\n%s", msg)
	}
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h := r.Header(); !strings.HasPrefix(h.Backend, "torch.distributed gloo") {
		t.Errorf("backend %q, want torch.distributed gloo (torch ...)", h.Backend)
	}
}
