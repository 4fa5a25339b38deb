package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// siteTable resolves program counters to "file:line" lazily, once per pc.
// Paths are relative to the working directory, or to the module root of the
// file when it lies outside it; never absolute.
type siteTable struct {
	mu    sync.Mutex
	cache map[uintptr]Site
	cwd   string
	roots map[string]string // directory -> module root ("" if none)
}

// Site is a resolved call site.
type Site struct {
	Function string
	File     string // relative path
	Line     int
}

func (s Site) String() string {
	if s.File == "" {
		return ""
	}
	return s.File + ":" + strconv.Itoa(s.Line)
}

func newSiteTable() *siteTable {
	cwd, _ := os.Getwd()
	return &siteTable{cache: map[uintptr]Site{}, cwd: cwd, roots: map[string]string{}}
}

func (t *siteTable) resolve(pc uintptr) Site {
	if pc == 0 {
		return Site{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.cache[pc]; ok {
		return s
	}
	fr, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	s := Site{Function: fr.Function, File: t.relative(fr.File), Line: fr.Line}
	t.cache[pc] = s
	return s
}

func (t *siteTable) format(pc uintptr) string { return t.resolve(pc).String() }

// at renders " at file:line", or "" for an unknown site.
func (t *siteTable) at(pc uintptr) string {
	if s := t.format(pc); s != "" {
		return " at " + s
	}
	return ""
}

func (t *siteTable) relative(file string) string {
	if file == "" {
		return ""
	}
	if t.cwd != "" {
		if rel, err := filepath.Rel(t.cwd, file); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	dir := filepath.Dir(file)
	root, ok := t.roots[dir]
	if !ok {
		root = findModuleRoot(dir)
		t.roots[dir] = root
	}
	if root != "" {
		if rel, err := filepath.Rel(root, file); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(file)
}

func findModuleRoot(dir string) string {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// panicSite is the file:line of the code that panicked, called from the
// deferred recover: the first frame of the stack outside the Go runtime.
func (t *siteTable) panicSite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		fr, more := frames.Next()
		if fr.Function != "" && !strings.HasPrefix(fr.Function, "runtime.") && fr.File != "" {
			return fmt.Sprintf("%s:%d", t.relative(fr.File), fr.Line)
		}
		if !more {
			return ""
		}
	}
}
