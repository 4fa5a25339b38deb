package mpi

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// overrunSrc overruns a local of a function of its own (rank 0's Send of 4
// ints from an int[2]), one of a function that realigns its frame for a
// local aligned to 32 bytes (gcc then places its locals from rbp, not from
// the frame base), and a global (everyone's Bcast of 4 ints of an int[3]), and sends the last row of a matrix and receives into the second
// half of an array: inside larger variables, to their ends, not overruns.
const overrunSrc = `#include <mpi.h>
#include <stdio.h>
int table[3];
static void other(int rank) {
	int v[2] = {rank, 2}, w[4];
	if (rank == 0)
		MPI_Send(v, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
	else
		MPI_Recv(w, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	printf("%d\n", w[0] + v[1]);
}
static void wide(int rank) {
	double d[2] __attribute__((aligned(32))) = {1, 2}, e[4];
	if (rank == 0)
		MPI_Send(d, 4, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
	else
		MPI_Recv(e, 4, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	printf("%g\n", e[0] + d[1]);
}
int main(int argc, char **argv) {
	int rank, m[3][2] = {{0, 1}, {2, 3}, {4, 5}}, half[4];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	other(rank);
	wide(rank);
	MPI_Bcast(table, 4, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Sendrecv(m[2], 2, MPI_INT, 1 - rank, 1, half + 2, 2, MPI_INT, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	return 0;
}
`

// TestOverrunFindings pins the buffer-overrun rule on a real job, built
// two ways: without optimization every overrun is named, the locals' by
// their function's frame; optimized, only the global's are: locals share
// stack slots there (wide's e and main's half do at -O2), so a local is
// never guessed at.
func TestOverrunFindings(t *testing.T) {
	mpitest.RequireMPI(t)
	for _, c := range []struct {
		opt  string
		want []string
	}{
		{"-O0", []string{ // (sorted)
			"rank 0: MPI_Bcast at overrun.c:26 sends 16 bytes from table (int[3], 12 bytes, a global): it reads 4 bytes past its end",
			"rank 0: MPI_Send at overrun.c:15 sends 32 bytes from d (double[2], 16 bytes, a local of wide()): it reads 16 bytes past its end",
			"rank 0: MPI_Send at overrun.c:7 sends 16 bytes from v (int[2], 8 bytes, a local of other()): it reads 8 bytes past its end",
			"rank 1: MPI_Bcast at overrun.c:26 receives 16 bytes into table (int[3], 12 bytes, a global): it writes 4 bytes past its end",
		}},
		{"-O2", []string{
			"rank 0: MPI_Bcast at overrun.c:26 sends 16 bytes from table (int[3], 12 bytes, a global): it reads 4 bytes past its end",
			"rank 1: MPI_Bcast at overrun.c:26 receives 16 bytes into table (int[3], 12 bytes, a global): it writes 4 bytes past its end",
		}},
	} {
		t.Run(c.opt, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "overrun.c")
			writeFile(t, src, overrunSrc)
			bin := filepath.Join(dir, "overrun")
			cc := exec.Command("mpicc", "-g", c.opt, "-o", bin, "overrun.c") // (sites: "overrun.c:7")
			cc.Dir = dir
			if out, err := cc.CombinedOutput(); err != nil {
				t.Fatalf("mpicc: %v\n%s", err, out)
			}
			segdir := runMPI(t, 2, bin, false)
			res, err := Merge(segdir, filepath.Join(dir, "t.p2ptrace"), MergeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Header.Findings {
				if f.Kind != verdict.BufferOverrun {
					t.Errorf("finding %s: %s", f.Kind, f.Message)
					continue
				}
				got = append(got, f.Message)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// TestUnoptimized: which gcc command lines build code whose locals each
// have their own slot (the last -O wins).
func TestUnoptimized(t *testing.T) {
	for _, c := range []struct {
		producer string
		want     bool
	}{
		{"GNU C99 12.2.0 -mtune=generic -march=x86-64 -g -O0 -std=c99", true},
		{"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g", true},
		{"GNU C17 12.2.0 -g -O2", false},
		{"GNU C17 12.2.0 -g -O2 -O0", true},
		{"GNU C17 12.2.0 -g -O0 -O3", false},
		{"GNU C17 12.2.0 -g -O2 -fno-omit-frame-pointer", false}, // (a frame pointer, but shared slots)
		{"GNU C17 12.2.0 -g -Og", false},
		{"GNU C17 12.2.0 -g -Os", false},
		{"Debian clang version 14.0.6", false}, // (clang does not say)
		{"", false},
	} {
		if got := unoptimized(c.producer); got != c.want {
			t.Errorf("unoptimized(%q) = %v, want %v", c.producer, got, c.want)
		}
	}
}

func TestSleb128(t *testing.T) {
	for _, c := range []struct {
		b []byte
		v int64
		n int
	}{
		{[]byte{0x5c}, -36, 1},
		{[]byte{0x10}, 16, 1},
		{[]byte{0xc0, 0x7e}, -192, 2},
		{[]byte{0x80, 0x01}, 128, 2},
		{[]byte{0x80}, 0, 0}, // unterminated
		{nil, 0, 0},
	} {
		if v, n := sleb128(c.b); v != c.v || n != c.n {
			t.Errorf("sleb128(% x) = %d, %d; want %d, %d", c.b, v, n, c.v, c.n)
		}
	}
}

// TestVariableAtWithoutDebugInfo: a module that is not there, or not an
// ELF file, names no variable, whatever the address.
func TestVariableAtWithoutDebugInfo(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(text, []byte(overrunSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing"), text} {
		m := openModule(path)
		defer m.close()
		if v, ok := m.variableAt(0x1000, 0, 0x7ffc0000, 0x7ffc0000); ok {
			t.Errorf("%s: variable %+v", filepath.Base(path), v)
		}
	}
}

// TestFindingHintsOfTheirOwn: the findings whose kind's hint would not fit
// say their own: a call outside MPI_Init..MPI_Finalize (the shim's
// outside_call text) and a window's memory past its variable.
func TestFindingHintsOfTheirOwn(t *testing.T) {
	for _, e := range []string{
		"called before MPI_Init (MPI-3.1 sec. 8.7: ...)",
		"called after MPI_Finalize (MPI-3.1 sec. 8.7: ...)",
	} {
		f := errorFinding(RankEnd{Rank: 1, State: StateErrored, Error: e}, "MPI_Send")
		if f.Kind != verdict.InvalidCall || !strings.Contains(f.Hint, "after MPI_Init") {
			t.Errorf("%s: %s, hint %q", e, f.Kind, f.Hint)
		}
	}
	if f := errorFinding(RankEnd{Rank: 1, State: StateErrored, Error: "MPI_ERR_TAG: invalid tag"}, "MPI_Send"); f.Hint != verdict.InvalidCall.Hint() {
		t.Errorf("an MPI error's hint %q, want the kind's", f.Hint)
	}
}
