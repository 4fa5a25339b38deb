package mpi

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// goHash is the Go recorders' hash (trace.PayloadHash), which the shim must reproduce.
func goHash(mode string, b []byte) uint64 { return trace.PayloadHash(mode, b) }

var hashLens = []int{0, 1, 3, 4, 7, 8, 15, 16, 31, 32, 33, 63, 64, 100, 4096, 4097, 5000, 65536, 1<<20 + 13}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// TestShimHashMatchesGo compiles the shim's hash into a harness and compares
// it with the Go recorder's for every mode and many lengths.
func TestShimHashMatchesGo(t *testing.T) {
	mpitest.RequireMPI(t)
	dir := t.TempDir()
	shimSrc := filepath.Join(dir, "p2ptrace_shim.c")
	if err := os.WriteFile(shimSrc, shimSource, 0o644); err != nil {
		t.Fatal(err)
	}
	var lens []string
	for _, n := range hashLens {
		lens = append(lens, fmt.Sprint(n))
	}
	harness := `#include "p2ptrace_shim.c"
int main(void) {
    static const size_t lens[] = {` + strings.Join(lens, ", ") + `};
    const char *modes[] = {"full", "sample", "off"};
    unsigned char *b = malloc(lens[sizeof lens / sizeof lens[0] - 1] + 1);
    for (int m = 0; m < 3; m++) {
        hash_mode = m;
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
            size_t n = lens[k];
            for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 7 + (i >> 8));
            printf("%s %zu %llu\n", modes[m], n, (unsigned long long)hash_bytes(b, n));
        }
    }
    return 0;
}
`
	h := filepath.Join(dir, "harness.c")
	os.WriteFile(h, []byte(harness), 0o644)
	bin := filepath.Join(dir, "harness")
	if out, err := exec.Command("mpicc", "-O2", "-o", bin, h, "-ldl", "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	lines := 0
	for sc.Scan() {
		var mode string
		var n int
		var got uint64
		if _, err := fmt.Sscan(sc.Text(), &mode, &n, &got); err != nil {
			t.Fatal(err)
		}
		if want := goHash(mode, pattern(n)); got != want {
			t.Errorf("%s hash of %d bytes: shim %#x, Go %#x", mode, n, got, want)
		}
		lines++
	}
	if lines != 3*len(hashLens) {
		t.Fatalf("%d lines from the harness", lines)
	}
}
