package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// openTerminal opens a pseudo-terminal and returns its terminal end and
// what it shows; the test's cleanup closes both ends.
func openTerminal(t *testing.T) (*os.File, *syncBuffer) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if errors.Is(err, pty.ErrUnsupported) {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	shown := &syncBuffer{}
	go io.Copy(shown, ptmx) // ends when the test closes the terminal
	return tty, shown
}

// runOnTerminal runs the command with stderr on a pseudo-terminal and
// returns its exit code, stdout and what the terminal showed, read up to
// the command's last line on stderr (each of these runs ends with
// "p2ptrace: N finding(s)"). Progress is drawn at once, not after a
// second. It gives up after timeouts rather than hang.
func runOnTerminal(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	tty, shown := openTerminal(t)
	type result struct {
		code int
		out  string
	}
	done := make(chan result, 1)
	go func() {
		var out bytes.Buffer
		code := runWith(&factory{In: strings.NewReader(""), Out: &out, Err: tty}, args)
		done <- result{code, out.String()}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%v did not finish in 60s; the terminal showed %q", args, shown.String())
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.HasSuffix(shown.String(), "finding(s)\r\n"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal did not show the last line in 10s: %q", shown.String())
		}
	}
	return res.code, res.out, shown.String()
}

// runToFile runs the command with stderr on a plain file (not a terminal).
func runToFile(t *testing.T, args ...string) (int, string) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	code := run(args, strings.NewReader(""), &out, f)
	errs, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, string(errs)
}

// TestProgressOnlyOnTerminal: replay --explore and check draw progress on
// stderr when it is a terminal; not when it is a file, nor with --json.
func TestProgressOnlyOnTerminal(t *testing.T) {
	path := recordInProcess(t, "anysource-race", 3, anySourceRace)
	cases := []struct {
		name string
		args []string
		bar  string
	}{
		{"replay", []string{"replay", "--fault", "delay", "--explore", "40", path}, "replaying"},
		{"check", []string{"check", "--strict", path}, "checking"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, shown := runOnTerminal(t, c.args...)
			if code != 1 || !strings.Contains(out, "message-race") {
				t.Fatalf("exit %d, stdout:\n%s", code, out)
			}
			if !strings.Contains(shown, c.bar) || !strings.Contains(shown, "%") {
				t.Fatalf("the terminal showed no progress %q:\n%q", c.bar, shown)
			}

			t.Logf("the terminal showed %q", shown)
			code, errs := runToFile(t, c.args...)
			if want := "p2ptrace: " + strings.SplitN(out, "\n", 2)[0] + "\n"; code != 1 || errs != want {
				t.Fatalf("stderr to a file (exit %d): %q: want only the summary line", code, errs)
			}

			code, out, shown = runOnTerminal(t, append([]string{c.args[0], "--json"}, c.args[1:]...)...)
			if code != 1 || !strings.HasPrefix(out, "{") {
				t.Fatalf("--json: exit %d, stdout:\n%s", code, out)
			}
			if strings.Contains(shown, c.bar) || strings.Contains(shown, "%") {
				t.Fatalf("--json drew progress on the terminal:\n%q", shown)
			}
		})
	}
}

// TestProgressWaitsOutItsDelay: a command that ends before the delay draws
// nothing on the terminal, whatever it counted.
func TestProgressWaitsOutItsDelay(t *testing.T) {
	tty, shown := openTerminal(t)
	p := newProgress(&factory{Err: tty, progressDelay: time.Hour}, 10, "checking", false)
	p.count(5, 10)
	p.finish()
	if _, err := io.WriteString(tty, "end\n"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(shown.String(), "end"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal did not show the end mark in 10s: %q", shown.String())
		}
	}
	if got := shown.String(); got != "end\r\n" {
		t.Fatalf("the terminal showed %q before the end mark: want nothing", got)
	}
}
