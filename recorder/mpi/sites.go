package mpi

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// siteKey is a call site independent of where its module was loaded: the
// module's path and the return address's offset from the module's load base.
type siteKey struct {
	path string
	off  uint64
}

// resolvedSite is a site resolved from DWARF.
type resolvedSite struct {
	Function string
	File     string
	Line     int
	compDir  string // the directory the compiler ran in (DW_AT_comp_dir)
}

// moduleLines resolves addresses of one ELF module to file:line.
type moduleLines struct {
	f      *elf.File
	d      *dwarf.Data
	bias   uint64 // lowest page-aligned PT_LOAD vaddr: what dladdr's load base maps to
	syms   []elf.Symbol
	cus    []cuRanges
	errMsg string
	objs   *moduleObjects // its variables (objects), built on first use
}

type cuRanges struct {
	e      *dwarf.Entry
	ranges [][2]uint64
}

func openModule(path string) *moduleLines {
	m := &moduleLines{}
	f, err := elf.Open(path)
	if err != nil {
		m.errMsg = err.Error()
		return m
	}
	m.f = f
	first := true
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			v := p.Vaddr &^ 4095
			if first || v < m.bias {
				m.bias, first = v, false
			}
		}
	}
	if syms, err := f.Symbols(); err == nil {
		m.syms = syms
	}
	if syms, err := f.DynamicSymbols(); err == nil {
		m.syms = append(m.syms, syms...)
	}
	m.syms = funcSymbols(m.syms)
	d, err := f.DWARF()
	if err != nil {
		m.errMsg = err.Error()
		return m
	}
	m.d = d
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit {
			rs, _ := d.Ranges(e)
			m.cus = append(m.cus, cuRanges{e: e, ranges: rs})
		}
		r.SkipChildren()
	}
	return m
}

func funcSymbols(in []elf.Symbol) []elf.Symbol {
	var out []elf.Symbol
	for _, s := range in {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out
}

func (m *moduleLines) close() {
	if m.f != nil {
		m.f.Close()
	}
}

// resolve maps an offset from the load base (of a return address: the
// call instruction is just before it) to its function, file and line.
func (m *moduleLines) resolve(off uint64) resolvedSite {
	var s resolvedSite
	if m.f == nil {
		return s
	}
	addr := off + m.bias - 1
	if i := sort.Search(len(m.syms), func(i int) bool { return m.syms[i].Value > addr }); i > 0 {
		sym := m.syms[i-1]
		if sym.Size == 0 || addr < sym.Value+sym.Size {
			s.Function = sym.Name
		}
	}
	if m.d == nil {
		return s
	}
	for _, cu := range m.cus {
		in := false
		for _, r := range cu.ranges {
			if addr >= r[0] && addr < r[1] {
				in = true
				break
			}
		}
		if !in {
			continue
		}
		lr, err := m.d.LineReader(cu.e)
		if err != nil || lr == nil {
			continue
		}
		var le dwarf.LineEntry
		if err := lr.SeekPC(addr, &le); err == nil && le.File != nil {
			s.File, s.Line = le.File.Name, le.Line
			s.compDir, _ = cu.e.Val(dwarf.AttrCompDir).(string)
			return s
		}
	}
	return s
}

// relativeTo renders file relative to dir when it lies under it.
func relativeTo(cwd, file string) string {
	if file == "" || cwd == "" || !filepath.IsAbs(file) {
		return file
	}
	if rel, err := filepath.Rel(cwd, file); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return file
}

// siteResolver resolves sites, opening each module once.
type siteResolver struct {
	cwd  string
	mods map[string]*moduleLines
}

func newSiteResolver(cwd string) *siteResolver {
	return &siteResolver{cwd: cwd, mods: map[string]*moduleLines{}}
}

func (r *siteResolver) resolve(k siteKey) resolvedSite {
	if file, line, ok := pythonSite(k.path); ok {
		return resolvedSite{File: relativeTo(r.cwd, file), Line: line}
	}
	s := r.module(k.path).resolve(k.off)
	s.File = relativeTo(r.cwd, s.File)
	if filepath.IsAbs(s.File) && s.compDir != "" {
		// Not under the working directory: name it as the compiler did,
		// relative to where it ran (the project's build directory).
		s.File = relativeTo(s.compDir, s.File)
	}
	if s.File == "" && s.Function == "" {
		s.Function = fmt.Sprintf("%s+%#x", filepath.Base(k.path), k.off)
	}
	return s
}

// module returns the module at path, opened on first use.
func (r *siteResolver) module(path string) *moduleLines {
	m, ok := r.mods[path]
	if !ok {
		m = openModule(path)
		r.mods[path] = m
	}
	return m
}

// variableAt finds the variable a buffer at addr points into, for a call
// at return-address offset off in the module at path loaded at base, made
// by a function whose frame pointer was fp (see moduleLines.variableAt).
func (r *siteResolver) variableAt(path string, off, base, fp, addr uint64) (variable, bool) {
	if _, _, ok := pythonSite(path); ok {
		return variable{}, false
	}
	return r.module(path).variableAt(off, base, fp, addr)
}

// pythonSite reads the module path the shim gives a Python call line of an
// mpi4py program, "FILE.py:LINE" (see py_module in the shim).
func pythonSite(path string) (file string, line int, ok bool) {
	i := strings.LastIndexByte(path, ':')
	if i < 0 || !strings.HasSuffix(path[:i], ".py") {
		return "", 0, false
	}
	n, err := strconv.Atoi(path[i+1:])
	if err != nil || n <= 0 {
		return "", 0, false
	}
	return path[:i], n, true
}

func (r *siteResolver) close() {
	for _, m := range r.mods {
		m.close()
	}
}
