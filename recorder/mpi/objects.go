package mpi

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The program's variables, from its debug info, for the buffer-overrun
// rule (overrunFindings): which variable a call's buffer points into, a
// local of the function that made the call or a global, and how large it
// is. A local's address is its offset from the calling function's frame
// base or frame pointer, which the shim saw (record.Frame). Locals are
// looked at only in code gcc built without optimization (-O0, its
// default), on x86-64: there every function keeps its frame pointer and
// every local its own stack slot. Optimized code shares one slot among
// locals whose lives do not overlap (a buffer would be named by another
// variable), and clang does not say how it optimized. A buffer found in no
// variable is not checked: the rule only speaks of memory it can name.

// variable is a variable of the program at run time.
type variable struct {
	name, typ string
	elem      cType  // the C type of its elements: itself, or an array's (0: not compared)
	fn        string // the function of a local or a static local ("" for a global)
	static    bool   // at a fixed address (a global or a static local)
	lo, hi    uint64 // its bytes at run time
}

// localVar is a local of a function: its offset and size.
type localVar struct {
	name, typ string
	elem      cType
	off       int64 // from the frame base (DW_OP_fbreg), or from rbp (fromFP)
	size      int64
	fromFP    bool // DW_OP_breg6: at rbp+off, whatever the frame base
}

// frameLocals is what a call site's function says of its locals.
type frameLocals struct {
	fn      string
	usable  bool  // unoptimized code whose frame base follows from the frame pointer
	baseOff int64 // frame base = frame pointer + baseOff
	// realigned: the function realigns its stack (a local aligned past 16
	// bytes): its frame base (the CFA) is no longer at a fixed distance
	// from rbp, and gcc places the locals from rbp instead (DW_OP_breg6).
	realigned bool
	locals    []localVar
	statics   []variable // its static locals (file addresses)
}

// moduleObjects indexes one module's variables (built on first use).
type moduleObjects struct {
	amd64   bool
	globals []variable             // sorted by lo: file addresses
	sites   map[uint64]frameLocals // by return-address offset
}

// objects returns m's variable index, building its globals on first use.
func (m *moduleLines) objects() *moduleObjects {
	if m.objs != nil {
		return m.objs
	}
	o := &moduleObjects{sites: map[uint64]frameLocals{}}
	m.objs = o
	if m.f == nil || m.d == nil {
		return o
	}
	o.amd64 = m.f.Machine == elf.EM_X86_64
	for _, cu := range m.cus {
		r := m.d.Reader()
		r.Seek(cu.e.Offset)
		if e, err := r.Next(); err != nil || e == nil || !e.Children {
			continue
		}
		for {
			e, err := r.Next()
			if err != nil || e == nil || e.Tag == 0 {
				break
			}
			if e.Tag == dwarf.TagVariable {
				if v, ok := m.staticVar(e, ""); ok {
					o.globals = append(o.globals, v)
				}
			}
			if e.Children {
				r.SkipChildren()
			}
		}
	}
	sort.Slice(o.globals, func(i, j int) bool { return o.globals[i].lo < o.globals[j].lo })
	return o
}

// staticVar reads a variable at a fixed address (DW_OP_addr): a global,
// or a function's static local (fn its function).
func (m *moduleLines) staticVar(e *dwarf.Entry, fn string) (variable, bool) {
	loc, ok := e.Val(dwarf.AttrLocation).([]byte)
	if !ok || len(loc) != 9 || loc[0] != 0x03 { // DW_OP_addr, 8 bytes
		return variable{}, false
	}
	name, typ, elem, size := m.varType(e)
	if size <= 0 {
		return variable{}, false
	}
	a := binary.LittleEndian.Uint64(loc[1:])
	return variable{name: name, typ: typ, elem: elem, fn: fn, static: true, lo: a, hi: a + uint64(size)}, true
}

// varType is a variable's name, its C type, the C type of its elements
// and its size (0 or less: unknown).
func (m *moduleLines) varType(e *dwarf.Entry) (name, typ string, elem cType, size int64) {
	name, _ = e.Val(dwarf.AttrName).(string)
	off, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok || name == "" {
		return name, "", 0, 0
	}
	t, err := m.d.Type(off)
	if err != nil {
		return name, "", 0, 0
	}
	return name, cTypeName(t), elemCType(t), t.Size()
}

// cType is what a predefined MPI datatype stands for in C, or a
// variable's element type, as the shim writes it (ctype_of): its class
// << 8 | its size in bytes; 0: not compared (a struct, a pointer, a
// derived datatype).
type cType uint32

// The classes of cType.
const (
	ctSigned   = 1 + iota // signed integers (not enums: their sign is the compiler's choice)
	ctUnsigned            // unsigned integers
	ctFloat               // floating point
	ctChar                // 1-byte characters and integers, either sign, and _Bool (MPI_CHAR ... MPI_UINT8_T, MPI_C_BOOL)
	ctAny                 // MPI_BYTE, MPI_PACKED: any type
)

func (c cType) class() int  { return int(c >> 8) }
func (c cType) size() int64 { return int64(c & 0xff) }

// elemCType is the C type of t's elements: t's own, through typedefs,
// qualifiers and arrays, when it is a scalar; 0 otherwise.
func elemCType(t dwarf.Type) cType {
	for {
		switch u := t.(type) {
		case *dwarf.TypedefType:
			t = u.Type
		case *dwarf.QualType:
			t = u.Type
		case *dwarf.ArrayType:
			t = u.Type
		default:
			class := 0
			switch t.(type) {
			case *dwarf.IntType:
				class = ctSigned
			case *dwarf.UintType:
				class = ctUnsigned
			case *dwarf.FloatType:
				class = ctFloat
			case *dwarf.CharType, *dwarf.UcharType, *dwarf.BoolType:
				class = ctChar
			}
			n := t.Size()
			if class == 0 || n <= 0 || n > 0xff {
				return 0
			}
			if n == 1 {
				class = ctChar
			} else if class == ctChar {
				return 0
			}
			return cType(class<<8 | int(n))
		}
	}
}

// matches says whether a buffer of elem elements may be handed over as
// the datatype that stands for mpi (MPI-3.1 sec. 3.3.1: the type of each
// variable matches the type its datatype names; MPI_BYTE and MPI_PACKED
// match any), or cannot tell (either 0). Signedness counts. Characters
// are C's bytes, on either side: an array of char holds any object, and
// any object may be moved as MPI_CHAR (MPICH's own tests send int arrays
// so), so a 1-byte type matches anything.
func (mpi cType) matches(elem cType) bool {
	if mpi == 0 || elem == 0 || mpi.class() == ctAny || mpi.class() == ctChar || elem.class() == ctChar {
		return true
	}
	return mpi == elem
}

// String says what c stands for, as reports name it.
func (c cType) String() string {
	switch c.class() {
	case ctSigned:
		return fmt.Sprintf("%d-byte signed integers", c.size())
	case ctUnsigned:
		return fmt.Sprintf("%d-byte unsigned integers", c.size())
	case ctFloat:
		return fmt.Sprintf("%d-byte floating-point numbers", c.size())
	case ctChar:
		return "1-byte characters"
	case ctAny:
		return "bytes"
	}
	return "values of another type"
}

// cTypeName writes t as C does ("int", "double[8]", "struct point").
func cTypeName(t dwarf.Type) string {
	dims := ""
	for {
		a, ok := t.(*dwarf.ArrayType)
		if !ok {
			break
		}
		dims += fmt.Sprintf("[%d]", a.Count)
		t = a.Type
	}
	s := t.String()
	if p, ok := t.(*dwarf.PtrType); ok {
		s = cTypeName(p.Type) + " *"
	}
	return s + dims
}

// localsAt returns what the function containing the return address at
// offset off says of its locals (cached).
func (m *moduleLines) localsAt(off uint64) frameLocals {
	o := m.objects()
	if fl, ok := o.sites[off]; ok {
		return fl
	}
	var fl frameLocals
	defer func() { o.sites[off] = fl }()
	if m.d == nil || !o.amd64 {
		return fl
	}
	pc := off + m.bias - 1 // the call instruction
	for _, cu := range m.cus {
		if !inRanges(cu.ranges, pc) {
			continue
		}
		producer, _ := cu.e.Val(dwarf.AttrProducer).(string)
		r := m.d.Reader()
		r.Seek(cu.e.Offset)
		if e, err := r.Next(); err != nil || e == nil || !e.Children {
			return fl
		}
		for {
			e, err := r.Next()
			if err != nil || e == nil || e.Tag == 0 {
				return fl
			}
			if e.Tag != dwarf.TagSubprogram {
				if e.Children {
					r.SkipChildren()
				}
				continue
			}
			rs, _ := m.d.Ranges(e)
			if !inRanges(rs, pc) {
				if e.Children {
					r.SkipChildren()
				}
				continue
			}
			fl.fn, _ = e.Val(dwarf.AttrName).(string)
			fl.baseOff, fl.usable = frameBase(e, producer)
			if e.Children {
				m.readLocals(r, pc, &fl)
			}
			// A local placed from rbp says the frame base is not (gcc
			// does that in a frame it realigns).
			if slices.ContainsFunc(fl.locals, func(l localVar) bool { return l.fromFP }) {
				fl.realigned = true
			}
			return fl
		}
	}
	return fl
}

// readLocals reads the locals of the entry r just read (a function or a
// lexical block), and of its blocks that contain pc, up to its end.
func (m *moduleLines) readLocals(r *dwarf.Reader, pc uint64, fl *frameLocals) {
	for {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == 0 {
			return
		}
		switch e.Tag {
		case dwarf.TagVariable, dwarf.TagFormalParameter:
			if v, ok := m.staticVar(e, fl.fn); ok {
				fl.statics = append(fl.statics, v)
			} else if loc, ok := e.Val(dwarf.AttrLocation).([]byte); ok && len(loc) > 1 && (loc[0] == 0x91 || loc[0] == 0x76) { // DW_OP_fbreg, DW_OP_breg6 (rbp)
				if off, n := sleb128(loc[1:]); n == len(loc)-1 {
					name, typ, elem, size := m.varType(e)
					if size > 0 {
						fl.locals = append(fl.locals, localVar{name: name, typ: typ, elem: elem, off: off, size: size, fromFP: loc[0] == 0x76})
					}
				}
			}
			if a, ok := e.Val(dwarf.AttrAlignment).(int64); ok && a > 16 {
				fl.realigned = true
			}
		case dwarf.TagLexDwarfBlock:
			// Blocks whose code does not hold the call may share their
			// slots with the ones that do: only the latter count.
			if rs, _ := m.d.Ranges(e); e.Children && inRanges(rs, pc) {
				m.readLocals(r, pc, fl)
				continue
			}
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}

// frameBase says where a function's frame base is from its frame pointer
// (rbp), in unoptimized code (the producer's): DW_OP_call_frame_cfa of a
// function with a frame pointer is rbp+16 (the return address and the
// saved rbp lie between them; a function that realigns its frame places
// its locals from rbp instead, see realigned), DW_OP_breg6 is rbp plus its
// offset, DW_OP_reg6 rbp.
func frameBase(e *dwarf.Entry, producer string) (int64, bool) {
	fb, ok := e.Val(dwarf.AttrFrameBase).([]byte)
	if !ok || len(fb) == 0 || !unoptimized(producer) {
		return 0, false
	}
	switch {
	case len(fb) == 1 && fb[0] == 0x9c: // DW_OP_call_frame_cfa
		return 16, true
	case len(fb) == 1 && fb[0] == 0x56: // DW_OP_reg6 (rbp)
		return 0, true
	case fb[0] == 0x76: // DW_OP_breg6 (rbp) + offset
		off, n := sleb128(fb[1:])
		return off, n == len(fb)-1
	}
	return 0, false
}

// unoptimized says whether gcc's producer string (its command line) built
// the code without optimization: the last -O is -O0, or there is none.
func unoptimized(producer string) bool {
	if !strings.HasPrefix(producer, "GNU ") {
		return false
	}
	opt := "-O0"
	for _, f := range strings.Fields(producer) {
		if strings.HasPrefix(f, "-O") {
			opt = f
		}
	}
	return opt == "-O0"
}

// variableAt finds the variable that addr points into, for a call made
// at return-address offset off in the module loaded at base, whose
// calling function's frame pointer was fp: a local of that function, one
// of its statics, or a global. ok is false when it knows none.
func (m *moduleLines) variableAt(off, base, fp, addr uint64) (variable, bool) {
	if m.f == nil || m.d == nil {
		return variable{}, false
	}
	fl := m.localsAt(off)
	if fl.usable && fp != 0 {
		fb := fp + uint64(fl.baseOff)
		for _, l := range fl.locals {
			lo := fp + uint64(l.off)
			switch {
			case l.fromFP:
			case !fl.realigned:
				lo = fb + uint64(l.off)
			default:
				continue
			}
			if addr >= lo && addr < lo+uint64(l.size) {
				return variable{name: l.name, typ: l.typ, elem: l.elem, fn: fl.fn, lo: lo, hi: lo + uint64(l.size)}, true
			}
		}
	}
	// Statics and globals: at file addresses, moved by the load base.
	rel := addr - base + m.bias
	for _, v := range fl.statics {
		if rel >= v.lo && rel < v.hi {
			return v.at(base - m.bias), true
		}
	}
	g := m.objects().globals
	i := sort.Search(len(g), func(i int) bool { return g[i].hi > rel })
	if i < len(g) && rel >= g[i].lo {
		return g[i].at(base - m.bias), true
	}
	return variable{}, false
}

// where says where v lives: "a global", "a local of f()", "a static of f()".
func (v variable) where() string {
	switch {
	case v.fn != "" && v.static:
		return "a static of " + v.fn + "()"
	case v.fn != "":
		return "a local of " + v.fn + "()"
	}
	return "a global"
}

// at is v moved by delta (file addresses to run-time ones).
func (v variable) at(delta uint64) variable {
	v.lo += delta
	v.hi += delta
	return v
}

func inRanges(rs [][2]uint64, pc uint64) bool {
	for _, r := range rs {
		if pc >= r[0] && pc < r[1] {
			return true
		}
	}
	return false
}

// sleb128 decodes a signed LEB128 number; n is the bytes it took (0: none).
func sleb128(b []byte) (v int64, n int) {
	var shift uint
	for i, c := range b {
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1
		}
		if shift >= 64 {
			return 0, 0
		}
	}
	return 0, 0
}
