package mpi

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// TestShimConstants reads the C shim's source and fails when one of its
// constants differs from the Go side that decodes what it writes: the
// segment's magic, version and header size, rank states, record types, hash
// modes, trace ops and dtypes, call codes and names, and the field bits of a
// record. No MPI needed.
func TestShimConstants(t *testing.T) {
	b, err := os.ReadFile("shim/p2ptrace_shim.c")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	c := cEnums(t, src)
	def := func(name string) string {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (.+)$`).FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("no #define %s in the shim", name)
		}
		return strings.TrimSpace(m[1])
	}
	if got := def("SEG_MAGIC"); got != strconv.Quote(segMagic) {
		t.Errorf("SEG_MAGIC %s, Go %q", got, segMagic)
	}
	if got := def("SEG_VERSION"); got != strconv.Itoa(segVersion) {
		t.Errorf("SEG_VERSION %s, Go %d", got, segVersion)
	}
	if got := def("SEG_HDR"); got != strconv.Itoa(segHdrSize) {
		t.Errorf("SEG_HDR %s, Go %d", got, segHdrSize)
	}

	want := map[string]int{
		"ST_RUNNING": int(StateRunning), "ST_BLOCKED": int(StateBlocked), "ST_FINALIZED": int(StateFinalized),
		"ST_ABORTED": int(StateAborted), "ST_ERRORED": int(StateErrored),
		"R_POST": recPost, "R_DONE": recDone, "R_MODULE": recModule, "R_COMM": recComm,
		"OP_SEND": int(trace.OpSend), "OP_SSEND": int(trace.OpSsend), "OP_BSEND": int(trace.OpBsend),
		"OP_RSEND": int(trace.OpRsend), "OP_RECV": int(trace.OpRecv), "OP_ISEND": int(trace.OpIsend),
		"OP_ISSEND": int(trace.OpIssend), "OP_IBSEND": int(trace.OpIbsend), "OP_IRSEND": int(trace.OpIrsend),
		"OP_IRECV": int(trace.OpIrecv), "OP_WAIT": int(trace.OpWait), "OP_WAITALL": int(trace.OpWaitall),
		"OP_WAITANY": int(trace.OpWaitany), "OP_TEST": int(trace.OpTest), "OP_TESTALL": int(trace.OpTestall),
		"OP_FREE": int(trace.OpFree), "OP_SENDRECV": int(trace.OpSendrecv), "OP_FINALIZE": int(trace.OpFinalize),
		"OP_BARRIER": int(trace.OpBarrier), "OP_PROBE": int(trace.OpProbe), "OP_IPROBE": int(trace.OpIprobe),
		"DT_NONE": int(trace.DtypeNone), "DT_U8": int(trace.Uint8), "DT_I32": int(trace.Int32), "DT_I64": int(trace.Int64),
		"DT_F32": int(trace.Float32), "DT_F64": int(trace.Float64), "DT_OPAQUE": int(trace.Opaque),
	}
	for i, m := range hashModes {
		want["HASH_"+strings.ToUpper(m)] = i
	}
	for i, n := range callNames[1:] {
		want["C_"+strings.ToUpper(strings.TrimPrefix(n, "MPI_"))] = i + 1
	}
	want["C_NONE"] = callNone
	for name, v := range want {
		if got, ok := c[name]; !ok {
			t.Errorf("%s: not in the shim (Go: %d)", name, v)
		} else if got != v {
			t.Errorf("%s = %d in the shim, %d in Go", name, got, v)
		}
	}
	for name, v := range c {
		if _, ok := want[name]; !ok && slices.ContainsFunc([]string{"ST_", "R_", "OP_", "DT_", "HASH_", "C_"}, func(p string) bool { return strings.HasPrefix(name, p) }) {
			t.Errorf("%s = %d in the shim has no Go counterpart", name, v)
		}
	}

	// call_names[] (what the shim prints) and callNames (what Go prints).
	m := regexp.MustCompile(`(?s)static const char \*call_names\[\] = \{(.*?)\};`).FindStringSubmatch(src)
	if m == nil {
		t.Fatal("no call_names in the shim")
	}
	var names []string
	for _, q := range regexp.MustCompile(`"[^"]*"`).FindAllString(m[1], -1) {
		s, _ := strconv.Unquote(q)
		names = append(names, s)
	}
	if !slices.Equal(names, callNames[:]) {
		t.Errorf("call_names in the shim:\n%q\nGo's callNames:\n%q", names, callNames)
	}

	// Field bits of rec_commit's mask.
	fields := map[string]int{
		"op": fOp, "dtype": fDtype, "flag": fFlag, "err": fErr, "seq": fSeq, "module": fModule, "peer": fPeer,
		"tag": fTag, "comm": fComm, "index": fIndex, "count": fCount, "bytes": fBytes, "t0": fT0, "t1": fT1,
		"pcoff": fPC, "req": fReq, "hash": fHash, "source": fSource, "stag": fStag, "scount": fSCount,
		"nreqs": fReqs, "plen": fPath, "addr": fAddr | fSpan,
	}
	seen := 0
	for _, m := range regexp.MustCompile(`if \(([^)]*)\) mask \|= ([^;]+);`).FindAllStringSubmatch(src, -1) {
		cond := regexp.MustCompile(`(?:r->)?(\w+)`).FindAllStringSubmatch(m[1], -1)
		field := cond[len(cond)-1][1] // "r->type != R_POST && r->seq": the last name
		if strings.Contains(m[1], "span") {
			field = "addr"
		}
		bits := 0
		for _, sh := range regexp.MustCompile(`1u << (\d+)`).FindAllStringSubmatch(m[2], -1) {
			n, _ := strconv.Atoi(sh[1])
			bits |= 1 << n
		}
		if w, ok := fields[field]; !ok {
			t.Errorf("mask bit of %q in the shim: no Go field", field)
		} else if bits != w {
			t.Errorf("field %s: bits %#x in the shim, %#x in Go", field, bits, w)
		}
		seen |= bits
	}
	if seen != fAll {
		t.Errorf("the shim's mask bits %#x, Go's fields %#x", seen, fAll)
	}
}

// cEnums returns the enumerators of every anonymous enum in src.
func cEnums(t *testing.T, src string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`(?s)enum \{(.*?)\};`).FindAllStringSubmatch(src, -1) {
		next := 0
		for _, item := range strings.Split(m[1], ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			name, val, ok := strings.Cut(item, "=")
			name = strings.TrimSpace(name)
			if ok {
				n, err := strconv.Atoi(strings.TrimSpace(val))
				if err != nil {
					t.Fatalf("enum value %q: %v", item, err)
				}
				next = n
			}
			out[name] = next
			next++
		}
	}
	if len(out) == 0 {
		t.Fatal("no enums in the shim")
	}
	return out
}
