package mpi

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed shim/p2ptrace_shim.c
var shimSource []byte

// ShimSource is the C source of the shim library.
func ShimSource() []byte { return append([]byte(nil), shimSource...) }

// ErrNoMPI is returned by BuildShim when there is no MPI compiler wrapper:
// callers print it and exit 2.
var ErrNoMPI = errors.New("mpicc not found: install an MPI implementation (e.g. apt-get install libopenmpi-dev openmpi-bin) or pass --mpicc")

// BuildOptions configure BuildShim.
type BuildOptions struct {
	MPICC    string // "" = "mpicc" from PATH
	CacheDir string // "" = os.UserCacheDir()/p2ptrace
	Force    bool   // rebuild even when the cached library is current
	Stderr   io.Writer
}

// BuildShim compiles the shim with mpicc and returns the path of the shared
// library. The library is cached under CacheDir by a key over the shim
// source, `mpicc -showme` and the compiler/MPI version, so it is rebuilt when
// either changes. It is built into a temporary file and renamed, so
// concurrent callers are safe.
func BuildShim(ctx context.Context, o BuildOptions) (string, error) {
	cc := o.MPICC
	if cc == "" {
		cc = "mpicc"
	}
	ccPath, err := exec.LookPath(cc)
	if err != nil {
		return "", fmt.Errorf("%w (%v)", ErrNoMPI, err)
	}
	cache := o.CacheDir
	if cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			d = os.TempDir()
		}
		cache = filepath.Join(d, "p2ptrace")
	}
	key := sha256.New()
	key.Write(shimSource)
	key.Write([]byte(ccPath))
	for _, args := range [][]string{{"-showme"}, {"--version"}} {
		out, _ := exec.CommandContext(ctx, ccPath, args...).CombinedOutput()
		key.Write([]byte{0})
		key.Write(out)
	}
	if out, err := exec.CommandContext(ctx, "ompi_info", "--version").CombinedOutput(); err == nil {
		key.Write(out)
	}
	name := "p2ptrace_shim-" + hex.EncodeToString(key.Sum(nil))[:16] + ".so"
	so := filepath.Join(cache, name)
	if !o.Force {
		if st, err := os.Stat(so); err == nil && st.Mode().IsRegular() {
			return so, nil
		}
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("build shim: %w", err)
	}
	tmpDir, err := os.MkdirTemp(cache, "build-")
	if err != nil {
		return "", fmt.Errorf("build shim: %w", err)
	}
	defer os.RemoveAll(tmpDir)
	src := filepath.Join(tmpDir, "p2ptrace_shim.c")
	if err := os.WriteFile(src, shimSource, 0o644); err != nil {
		return "", fmt.Errorf("build shim: %w", err)
	}
	tmpSO := filepath.Join(tmpDir, name)
	cmd := exec.CommandContext(ctx, ccPath, "-shared", "-fPIC", "-O2", "-g", "-Wall", "-o", tmpSO, src, "-ldl", "-lpthread")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		if o.Stderr != nil {
			o.Stderr.Write(stderr.Bytes())
		}
		return "", fmt.Errorf("build shim with %s: %v: %s", ccPath, err, strings.TrimSpace(stderr.String()))
	}
	if o.Stderr != nil && stderr.Len() > 0 {
		o.Stderr.Write(stderr.Bytes())
	}
	if err := os.Rename(tmpSO, so); err != nil {
		return "", fmt.Errorf("build shim: %w", err)
	}
	return so, nil
}
