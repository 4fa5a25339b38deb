package mpi

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
)

var (
	shimOnce sync.Once
	shimPath string
	shimErr  error
	shimDir  string
)

// shim builds the shim once per test binary (into a private cache).
func shim(t testing.TB) string {
	t.Helper()
	mpitest.RequireMPI(t)
	shimOnce.Do(func() {
		shimDir, shimErr = os.MkdirTemp("", "p2ptrace-shim-test-")
		if shimErr != nil {
			return
		}
		shimPath, shimErr = BuildShim(context.Background(), BuildOptions{CacheDir: shimDir})
	})
	if shimErr != nil {
		t.Fatal(shimErr)
	}
	return shimPath
}

func TestMain(m *testing.M) {
	mpitest.UseTestPML()
	code := m.Run()
	if shimDir != "" {
		os.RemoveAll(shimDir)
	}
	os.Exit(code)
}

// compile writes src to dir/name.c and compiles it with mpicc -g -O0.
func compile(t testing.TB, dir, name, src string) string {
	t.Helper()
	mpitest.RequireMPI(t)
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	out, err := exec.Command("mpicc", "-g", "-O0", "-o", bin, c).CombinedOutput()
	if err != nil {
		t.Fatalf("mpicc %s: %v\n%s", name, err, out)
	}
	return bin
}

// mpirunCmd is the mpirun command of n ranks of bin, recording into segdir
// (no recording when segdir is "").
func mpirunCmd(ctx context.Context, t testing.TB, n int, segdir string, extraEnv []string, bin string, args ...string) *exec.Cmd {
	t.Helper()
	a := []string{"-n", strconv.Itoa(n), "--oversubscribe", "--mca", "btl", "self,vader"}
	if segdir != "" {
		a = append(a, "-x", "LD_PRELOAD="+shim(t), "-x", EnvSegDir+"="+segdir)
	}
	for _, e := range extraEnv {
		a = append(a, "-x", e)
	}
	a = append(a, bin)
	a = append(a, args...)
	cmd := exec.CommandContext(ctx, "mpirun", a...)
	cmd.Env = append(mpitest.RunEnv(), extraEnv...)
	cmd.Dir = filepath.Dir(bin)
	return cmd
}

// runMPI runs n ranks of bin recording into a new segment directory and
// returns it. wantFail says the job is expected to exit non-zero.
func runMPI(t testing.TB, n int, bin string, wantFail bool, extraEnv ...string) string {
	t.Helper()
	segdir := filepath.Join(filepath.Dir(bin), "seg-"+filepath.Base(bin))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := mpirunCmd(ctx, t, n, segdir, extraEnv, bin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if (err != nil) != wantFail {
		t.Fatalf("mpirun %s: err=%v (want failure: %v)\n%s%s", filepath.Base(bin), err, wantFail, out.String(), ranksAt(segdir, n))
	}
	return segdir
}

// mergedJob compiles src as name, runs it on n ranks recording (the job
// must succeed) and merges the segments: the trace's path.
func mergedJob(t testing.TB, name, src string, n int) string {
	t.Helper()
	dir := t.TempDir()
	segdir := runMPI(t, n, compile(t, dir, name, src), false)
	out := filepath.Join(dir, name+".p2ptrace")
	if _, err := Merge(segdir, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// ranksAt says where each of n ranks was when its job ended, from their
// segments: what a test that killed a slow or hung job prints.
func ranksAt(segdir string, n int) string {
	var b strings.Builder
	for r := range n {
		st, err := ReadLiveState(SegmentPath(segdir, r))
		if err != nil {
			fmt.Fprintf(&b, "rank %d: %v\n", r, err)
			continue
		}
		fmt.Fprintf(&b, "rank %d: state %v, %d calls, blocked in %q, polls %d..%d\n", r, st.State, st.Calls, st.Blocked, st.PollFrom, st.PollTo)
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
