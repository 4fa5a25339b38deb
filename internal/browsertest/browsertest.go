// Package browsertest runs pages in a real headless Chromium for tests: the
// DOM after the page's scripts ran, and screenshots.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Names under which Debian and others install Chromium.
var names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// RequireChromium returns the path of a Chromium. Without one it skips the
// test, unless the environment variable CI is set: then the test fails, so
// that a CI machine without a browser cannot pass by skipping.
func RequireChromium(t testing.TB) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("no Chromium on PATH (looked for %v), and CI is set: the browser tests must run (apt-get install chromium)", names)
	}
	t.Skipf("skipping: no Chromium on PATH (looked for %v); apt-get install chromium to run the browser tests", names)
	return ""
}

// Timeout bounds one browser run.
const Timeout = 2 * time.Minute

// run runs the browser headless on the page file with extra flags, and
// returns its standard output.
func run(t testing.TB, browser, page string, flags ...string) []byte {
	t.Helper()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	args := append([]string{
		"--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--hide-scrollbars", "--user-data-dir=" + t.TempDir(),
		// Root (containers, CI) cannot use the sandbox.
		"--no-sandbox",
		// Let the page's scripts run to the end before the DOM or the shot is taken.
		"--virtual-time-budget=10000",
	}, flags...)
	args = append(args, "file://"+abs)
	cmd := exec.CommandContext(ctx, browser, args...)
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", browser, args, err, stderr.b)
	}
	return out
}

// DumpDOM returns the page's DOM, serialized, after its scripts ran.
func DumpDOM(t testing.TB, browser, page string) string {
	t.Helper()
	return string(run(t, browser, page, "--dump-dom"))
}

// Screenshot writes a PNG of the page, width x height pixels, to png.
func Screenshot(t testing.TB, browser, page, png string, width, height int) {
	t.Helper()
	abs, err := filepath.Abs(png)
	if err != nil {
		t.Fatal(err)
	}
	run(t, browser, page, "--screenshot="+abs, "--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height))
	if fi, err := os.Stat(abs); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot at %s: %v", abs, err)
	}
}

// limitedBuffer keeps the first 64 KiB written (Chromium logs a lot).
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 64<<10 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}
