package python

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed sitecustomize.py p2ptrace_rec/*.py
var files embed.FS

// EnvPython names the recorder sitecustomize.py installs ("torch").
const EnvPython = "P2PTRACE_PYTHON"

// Install writes the recorder under cacheDir ("" = os.UserCacheDir()/p2ptrace)
// in a directory named by a hash of its content, and returns that directory,
// for the ranks' PYTHONPATH. Files are written to a temporary directory and
// renamed, so concurrent callers are safe.
func Install(cacheDir string) (string, error) {
	if cacheDir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			d = os.TempDir()
		}
		cacheDir = filepath.Join(d, "p2ptrace")
	}
	key := sha256.New()
	var paths []string
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		key.Write([]byte(p))
		key.Write(b)
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("python recorder: %w", err)
	}
	dir := filepath.Join(cacheDir, "python-"+hex.EncodeToString(key.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "sitecustomize.py")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("python recorder: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheDir, "python-tmp-")
	if err != nil {
		return "", fmt.Errorf("python recorder: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, p := range paths {
		b, _ := files.ReadFile(p)
		dst := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("python recorder: %w", err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return "", fmt.Errorf("python recorder: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("python recorder: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "sitecustomize.py")); statErr == nil {
			return dir, nil // another process installed it first
		}
		return "", fmt.Errorf("python recorder: %w", err)
	}
	return dir, nil
}
