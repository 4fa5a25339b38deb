package sim

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/p2ptrace/p2ptrace/internal/hugepage"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestOpLayout pins the layout Op's doc promises: two whole cache lines;
// in the first, the envelope and all that the visits after the match
// (transfer done, completion, wait, release) read or write; in the second,
// the rest of what a match and a replay's post write.
func TestOpLayout(t *testing.T) {
	var op Op
	if n := unsafe.Sizeof(op); n != 128 {
		t.Fatalf("an Op is %d bytes, want 128", n)
	}
	lines := []map[string]uintptr{{
		"Rank": unsafe.Offsetof(op.Rank), "Peer": unsafe.Offsetof(op.Peer), "Tag": unsafe.Offsetof(op.Tag),
		"Comm": unsafe.Offsetof(op.Comm), "match": unsafe.Offsetof(op.match), "DoneT": unsafe.Offsetof(op.DoneT),
		"Req": unsafe.Offsetof(op.Req), "Kind": unsafe.Offsetof(op.Kind), "Dtype": unsafe.Offsetof(op.Dtype),
		"Mode": unsafe.Offsetof(op.Mode), "Err": unsafe.Offsetof(op.Err), "Forced": unsafe.Offsetof(op.Forced),
		"Flag": unsafe.Offsetof(op.Flag), "Dropped": unsafe.Offsetof(op.Dropped), "bits": unsafe.Offsetof(op.bits),
		"MatchRank": unsafe.Offsetof(op.MatchRank), "Source": unsafe.Offsetof(op.Source),
		"StatusTag": unsafe.Offsetof(op.StatusTag),
	}, {
		"MatchSeq": unsafe.Offsetof(op.MatchSeq), "StatusCnt": unsafe.Offsetof(op.StatusCnt),
		"Bytes": unsafe.Offsetof(op.Bytes), "Seq": unsafe.Offsetof(op.Seq), "PostT": unsafe.Offsetof(op.PostT),
		"Count": unsafe.Offsetof(op.Count), "Site": unsafe.Offsetof(op.Site), "ext": unsafe.Offsetof(op.ext),
	}}
	for want, fields := range lines {
		for name, off := range fields {
			if line := int(off / 64); line != want {
				t.Errorf("%s at byte %d, in cache line %d, want %d", name, off, line, want)
			}
		}
	}
}

// fillOp sets every field of op whose offset is in [from, to) to a value
// other than its zero.
func fillOp(t *testing.T, op *Op, from, to uintptr) {
	t.Helper()
	typ := reflect.TypeFor[Op]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Offset < from || f.Offset >= to {
			continue
		}
		v := reflect.NewAt(f.Type, unsafe.Add(unsafe.Pointer(op), f.Offset)).Elem()
		switch v.Kind() {
		case reflect.Int, reflect.Int32, reflect.Int64:
			v.SetInt(1)
		case reflect.Uint8, reflect.Uint16, reflect.Uint64, reflect.Uintptr:
			v.SetUint(1)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		case reflect.Slice:
			v.Set(reflect.MakeSlice(f.Type, 1, 1))
		default:
			t.Fatalf("field %s: fillOp knows no %s", f.Name, v.Kind())
		}
	}
}

// TestNewOpReusesAsFresh: an op newOp takes from the free list equals one
// from a new slab, whatever it held, except that it keeps its opExt,
// zeroed (an op posted without a buffer has none; one with a buffer, a
// delay, a wait's requests has one).
func TestNewOpReusesAsFresh(t *testing.T) {
	for _, tc := range []struct {
		name string
		prep func(op *Op)
	}{
		{"posted without a buffer", func(op *Op) {
			fillOp(t, op, 0, unsafe.Sizeof(*op))
			op.bits, op.Forced, op.ext = bitNoData|bitActive|bitFromPost|bitFreed, false, nil
		}},
		{"with a buffer", func(op *Op) {
			fillOp(t, op, 0, unsafe.Sizeof(*op))
			op.bits = bitFromPost
			*op.ext = opExt{data: []byte{1}, hashPost: 7}
		}},
		{"delayed", func(op *Op) {
			fillOp(t, op, 0, unsafe.Sizeof(*op))
			op.bits = bitNoData | bitDelay
			*op.ext = opExt{delay: 5}
		}},
		{"a wait", func(op *Op) {
			fillOp(t, op, 0, unsafe.Sizeof(*op))
			*op.ext = opExt{reqs: []*Op{op}}
		}},
		{"forced", func(op *Op) { fillOp(t, op, 0, unsafe.Sizeof(*op)); op.bits, op.Forced = bitNoData, true }},
	} {
		e := New(Config{Ranks: 1})
		want := *e.newOp(0, trace.OpIsend) // from the slab
		op := new(Op)
		tc.prep(op)
		x := op.ext
		e.pushFree(op)
		got := e.newOp(0, trace.OpIsend)
		if got != op {
			t.Fatalf("%s: newOp did not take the free op", tc.name)
		}
		if got.ext != x || x != nil && !reflect.DeepEqual(*x, opExt{}) {
			t.Errorf("%s: reused op's opExt %p (%+v), want %p zeroed", tc.name, got.ext, got.ext, x)
		}
		want.Seq, want.ext = got.Seq, got.ext
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("%s: reused op\n%+v\nwant\n%+v", tc.name, *got, want)
		}
		if got.Data() != nil || got.Reqs() != nil || got.Delay() != 0 || got.HashPost() != 0 {
			t.Errorf("%s: reused op has data %v, reqs %v, delay %d, hash %d", tc.name, got.Data(), got.Reqs(), got.Delay(), got.HashPost())
		}
	}
}

// TestBigEnginesTakeHugePages: once an engine has made bigSlabAfter ops,
// its slabs are bigSlab ops on advised memory (the kernel's "hg" flag,
// which a kernel with transparent huge pages sets whatever its setting);
// before, they are small and not advised.
func TestBigEnginesTakeHugePages(t *testing.T) {
	e := New(Config{Ranks: 1})
	first := e.newOp(0, trace.OpIsend)
	// (An earlier big engine of this process, as with -count 2, may have
	// advised the heap arena the first op is in: then its memory says
	// nothing of the small slabs.)
	before := make([]Op, minSlab)
	if earlier, _ := hugepage.Advised(uintptr(unsafe.Pointer(&before[0]))); !earlier {
		if small, _ := hugepage.Advised(uintptr(unsafe.Pointer(first))); small {
			t.Errorf("an engine's first op is on advised memory")
		}
	}
	var last *Op
	for range bigSlabAfter + maxSlab { // (the small slab open at bigSlabAfter ops runs out)
		last = e.newOp(0, trace.OpIsend)
	}
	if n := len(e.slab); n < maxSlab || n >= bigSlab {
		t.Errorf("after %d ops the slab has %d ops left, want a big slab's (%d) but the last", e.opsMade, n, bigSlab)
	}
	advised, err := hugepage.Advised(uintptr(unsafe.Pointer(last)))
	if want := hugepage.Kernel(); advised != want || want && err != nil {
		t.Errorf("op %d on advised memory: %v (%v), want %v", e.opsMade, advised, err, want)
	}
}

// TestCopyKeepsWhatReportsRead: a copy kept for a report has the stream id
// (a reduction's operator), the forced source and the match time of the
// original, though they live out of line, and none of its buffer,
// requests or stream, which the original's next use changes.
func TestCopyKeepsWhatReportsRead(t *testing.T) {
	op := &Op{Rank: 1, Kind: trace.OpIrecv}
	op.SetStream(int32(trace.ReduceMax))
	op.Force(3)
	op.SetData([]byte{1})
	op.SetReqs([]*Op{op})
	op.x().matchT = 42
	c := op.Copy()
	if c.Stream() != int32(trace.ReduceMax) || !c.Forced || c.ForcedSrc() != 3 || c.MatchT() != 42 {
		t.Errorf("copy: stream %d, forced %v from %d, matched at %d; want %d, true from 3, 42", c.Stream(), c.Forced, c.ForcedSrc(), c.MatchT(), trace.ReduceMax)
	}
	if c.Data() != nil || c.Reqs() != nil || c.ext == op.ext {
		t.Errorf("copy shares the original's opExt or keeps its data %v, reqs %v", c.Data(), c.Reqs())
	}
	if plain := (&Op{Rank: 1}).Copy(); plain.ext != nil {
		t.Errorf("a copy of an op with nothing out of line has an opExt")
	}
}

// TestBigSlabOpsAreLineAligned: the ops of a big engine's slabs (see
// bigSlabAfter) each start a cache line, so that TestOpLayout's lines are
// the machine's where it matters: a replay of millions of live ops. (A
// small slab is a small object with pointers, which the allocator starts
// 8 bytes past its block for its header: its ops straddle one line more.
// Making the medium slabs large objects, so aligned, changed nothing
// measurable at 256 ranks or in a ring, 4 interleaved pairs.)
func TestBigSlabOpsAreLineAligned(t *testing.T) {
	e := New(Config{Ranks: 1})
	for range bigSlabAfter {
		e.newOp(0, trace.OpIsend)
	}
	for i := range 2*bigSlab + maxSlab {
		if op := e.newOp(0, trace.OpIsend); e.opsMade > bigSlabAfter+maxSlab && uintptr(unsafe.Pointer(op))%64 != 0 {
			t.Fatalf("op %d of the big slabs at %p: not on a 64-byte boundary", i, op)
		}
	}
}
