package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckJudgesRacesByRerunning: a race whose other order the model
// replays cleanly is judged by re-running the recorded program with that
// match forced. anysource-assume fails that way (its own check of the data):
// a message-race with the evidence, exit 1. anysource-race is correct in
// either order: a note, exit 0. Without re-runs the race is unconfirmed: a
// note, exit 0, or a finding with --strict.
func TestCheckJudgesRacesByRerunning(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and re-runs programs; skipped with -short")
	}
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join("..", "..")
	record := func(name string) string {
		out := filepath.Join(dir, name+".db")
		if code, _, errs := runCmd(t, "record", "-o", out, filepath.Join(root, "testdata", "train", name)); code != 0 {
			t.Fatalf("record %s: exit %d\n%s", name, code, errs)
		}
		return out
	}
	assume, race := record("anysource-assume"), record("anysource-race")

	code, out, errs := runCmd(t, "check", assume)
	if code != 1 || !strings.Contains(out, "[1] message-race (cause: program) under --force-match 0:0=2 (re-run)") ||
		!strings.Contains(out, "re-run with this match forced, the program failed: exit status 1") ||
		!strings.Contains(out, "rank 0: the first message is rank 2's, want rank 1's") {
		t.Fatalf("check %s: exit %d\n%s%s", assume, code, out, errs)
	}
	code, out, errs = runCmd(t, "check", race)
	if code != 0 || !strings.HasPrefix(out, "no findings\n") ||
		!strings.Contains(out, "note: rank 0's Recv at testdata/train/anysource-race/main.go:20 is nondeterministic: 1 alternative(s) re-run, all clean") {
		t.Fatalf("check %s: exit %d\n%s%s", race, code, out, errs)
	}
	code, out, errs = runCmd(t, "check", "--no-rerun", assume)
	if code != 0 || !strings.Contains(out, "note: unconfirmed race: rank 0's Recv at testdata/train/anysource-assume/main.go:22 can match 1 other sender(s)") || !strings.Contains(out, "(--no-rerun)") {
		t.Fatalf("check --no-rerun: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCmd(t, "check", "--no-rerun", "--strict", assume)
	if code != 1 || !strings.Contains(out, "unconfirmed: the model replay of this order is clean") {
		t.Fatalf("check --no-rerun --strict: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := runCmd(t, "check", "--max-reruns", "0", assume); code != 2 || !strings.Contains(errs, "--max-reruns 0: want at least 1") {
		t.Fatalf("--max-reruns 0: exit %d %s", code, errs)
	}
	if code, _, errs := runCmd(t, "record", "--force-match", "nope", "-o", filepath.Join(dir, "x.db"), filepath.Join(root, "testdata", "train", "pingpong")); code != 2 || !strings.Contains(errs, "want RANK:SEQ=SRC") {
		t.Fatalf("--force-match nope: exit %d %s", code, errs)
	}
}

// TestCheckDoesNotRerunAChangedProgram: an executable that changed since it
// was recorded is not run again: the race stays unconfirmed, and the note
// says why.
func TestCheckDoesNotRerunAChangedProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program; skipped with -short")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "assume")
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Dir = filepath.Join("..", "..", "testdata", "train", "anysource-assume")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "assume.db")
	if code, _, errs := runCmd(t, "record", "-o", db, exe); code != 0 {
		t.Fatalf("record: exit %d\n%s", code, errs)
	}
	f, err := os.OpenFile(exe, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0})
	f.Close()
	code, out, errs := runCmd(t, "check", db)
	if code != 0 || !strings.Contains(out, "note: unconfirmed race: rank 0's Recv at testdata/train/anysource-assume/main.go:22") ||
		!strings.Contains(out, "(the program "+exe+" changed since it was recorded)") {
		t.Fatalf("check of a changed program: exit %d\n%s%s", code, out, errs)
	}
}
