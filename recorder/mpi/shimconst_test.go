package mpi

import (
	"os"
	"path/filepath"
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
	if got := def("SEG_ERR_REJECTED"); got != strconv.Itoa(segErrRejectedOff) {
		t.Errorf("SEG_ERR_REJECTED %s, Go %d", got, segErrRejectedOff)
	}

	want := map[string]int{
		"ST_RUNNING": int(StateRunning), "ST_BLOCKED": int(StateBlocked), "ST_FINALIZED": int(StateFinalized),
		"ST_ABORTED": int(StateAborted), "ST_ERRORED": int(StateErrored), "ST_SIGNALED": int(StateSignaled), "ST_EXITED": int(StateExited),
		"R_POST": recPost, "R_DONE": recDone, "R_MODULE": recModule, "R_COMM": recComm, "R_WRITE": recWrite, "R_RMA": recRMA, "R_FREE": recFree, "R_OBJ": recObj, "RMA_CAS": rmaCAS,
		"RMA_EPOCH_FENCE": rmaEpochFence, "RMA_EPOCH_EXCL": rmaEpochExcl, "RMA_EPOCH_SHARED": rmaEpochShared,
		"RMA_EPOCH_START": rmaEpochStart, "RMA_EPOCH_END": rmaEpochEnd, "RMA_WRITTEN": rmaWritten, "RMA_MIXED": rmaMixed, "RMA_OVERLAP": rmaOverlap, "RMA_FLUSH": rmaFlush, "RMA_GROUP": rmaGroup, "RMA_RELEASED": rmaReleased, "RMA_REQ_DONE": rmaReqDone,
		"WRITE_PROGRAM": writeProgram, "WRITE_FRAME": writeFrame, "WRITE_FREED": writeFreed,
		"OP_SEND": int(trace.OpSend), "OP_SSEND": int(trace.OpSsend), "OP_BSEND": int(trace.OpBsend),
		"OP_RSEND": int(trace.OpRsend), "OP_RECV": int(trace.OpRecv), "OP_ISEND": int(trace.OpIsend),
		"OP_ISSEND": int(trace.OpIssend), "OP_IBSEND": int(trace.OpIbsend), "OP_IRSEND": int(trace.OpIrsend),
		"OP_IRECV": int(trace.OpIrecv), "OP_WAIT": int(trace.OpWait), "OP_WAITALL": int(trace.OpWaitall),
		"OP_WAITANY": int(trace.OpWaitany), "OP_TEST": int(trace.OpTest), "OP_TESTALL": int(trace.OpTestall),
		"OP_FREE": int(trace.OpFree), "OP_SENDRECV": int(trace.OpSendrecv), "OP_FINALIZE": int(trace.OpFinalize),
		"OP_BARRIER": int(trace.OpBarrier), "OP_PROBE": int(trace.OpProbe), "OP_IPROBE": int(trace.OpIprobe),
		"OP_CANCEL": int(trace.OpCancel), "OP_BUFFER_ATTACH": int(trace.OpBufferAttach), "OP_BUFFER_DETACH": int(trace.OpBufferDetach),
		"OP_BCAST": int(trace.OpBcast), "OP_REDUCE": int(trace.OpReduce), "OP_ALLREDUCE": int(trace.OpAllreduce),
		"OP_GATHER": int(trace.OpGather), "OP_GATHERV": int(trace.OpGatherv), "OP_SCATTER": int(trace.OpScatter),
		"OP_SCATTERV": int(trace.OpScatterv), "OP_ALLGATHER": int(trace.OpAllgather), "OP_ALLGATHERV": int(trace.OpAllgatherv),
		"OP_ALLTOALL": int(trace.OpAlltoall), "OP_ALLTOALLV": int(trace.OpAlltoallv), "OP_REDUCE_SCATTER": int(trace.OpReduceScatter),
		"OP_REDUCE_SCATTER_BLOCK": int(trace.OpReduceScatterBlock), "OP_SCAN": int(trace.OpScan), "OP_EXSCAN": int(trace.OpExscan),
		"DT_NONE": int(trace.DtypeNone), "DT_U8": int(trace.Uint8), "DT_I32": int(trace.Int32), "DT_I64": int(trace.Int64),
		"DT_F32": int(trace.Float32), "DT_F64": int(trace.Float64), "DT_OPAQUE": int(trace.Opaque),
	}
	for o := trace.OpIbarrier; o <= trace.OpIexscan; o++ { // OP_IBARRIER..OP_IEXSCAN
		want["OP_"+strings.ToUpper(o.String())] = int(o)
	}
	for i, m := range hashModes {
		want["HASH_"+strings.ToUpper(m)] = i
	}
	// The shim's calls are the MPI ones; the others are the Python
	// recorder's (torchCall; TestPythonRecorderConstants).
	for i, n := range callNames[1:] {
		if !torchCall(i + 1) {
			want["C_"+strings.ToUpper(strings.TrimPrefix(n, "MPI_"))] = i + 1
		}
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
		if _, ok := want[name]; !ok && slices.ContainsFunc([]string{"ST_", "R_", "RMA_", "OP_", "DT_", "HASH_", "C_"}, func(p string) bool { return strings.HasPrefix(name, p) }) {
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
	// The Python recorder's calls (torchCall) are left out of the shim's
	// table (designated initializers skip them).
	if !slices.Equal(names, slices.Concat(callNames[:callTorchInit], callNames[callMprobe:callTorchAllGatherIntoTensor], callNames[callTorchMonitoredBarrier+1:])) {
		t.Errorf("call_names in the shim:\n%q\nGo's callNames:\n%q", names, callNames)
	}

	// Field bits of rec_commit's mask.
	fields := map[string]int{
		"op": fOp, "dtype": fDtype, "flag": fFlag, "err": fErr, "seq": fSeq, "module": fModule, "peer": fPeer,
		"tag": fTag, "comm": fComm, "index": fIndex, "count": fCount, "bytes": fBytes, "t0": fT0, "t1": fT1,
		"pcoff": fPC, "req": fReq, "hash": fHash, "source": fSource, "stag": fStag, "scount": fSCount,
		"nreqs": fReqs, "plen": fPath, "addr": fAddr | fSpan, "nsig": fSig, "frame": fFrame, "addr2": fAddr2, "heap2": fHeap, "ctypes": fCType,
	}
	seen := 0
	for _, m := range regexp.MustCompile(`if \(([^)]*)\) mask \|= ([^;]+);`).FindAllStringSubmatch(src, -1) {
		cond := regexp.MustCompile(`(?:r->)?(\w+)`).FindAllStringSubmatch(m[1], -1)
		field := cond[len(cond)-1][1] // "r->type != R_POST && r->seq": the last name
		switch {
		case strings.Contains(m[1], "span2"):
			field = "addr2"
		case strings.Contains(m[1], "span"):
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
	if seen != fAll&^fSite { // the site field is the Python recorder's
		t.Errorf("the shim's mask bits %#x, Go's fields %#x", seen, fAll&^fSite)
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

// TestPythonRecorderConstants: the Python recorder (recorder/python) writes
// the same segments: its version, header size, site field bit, header
// offsets of the site ids and call codes must be Go's.
func TestPythonRecorderConstants(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "python", "p2ptrace_rec", "torchrec.py"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	num := func(re string) int {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("torchrec.py has no %s", re)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	// COLLECTIVES: each torch collective's call code names it in Go.
	block := regexp.MustCompile(`(?s)\nCOLLECTIVES = \{(.*?)\n\}`).FindStringSubmatch(src)
	if block == nil {
		t.Fatal("torchrec.py has no COLLECTIVES")
	}
	colls := regexp.MustCompile(`"(\w+)": (\d+)`).FindAllStringSubmatch(block[1], -1)
	for _, m := range colls {
		code, _ := strconv.Atoi(m[2])
		if !torchCall(code) || callName(uint32(code)) != "dist."+m[1] {
			t.Errorf("COLLECTIVES[%q] = %d in torchrec.py, which Go names %q", m[1], code, callName(uint32(code)))
		}
	}
	if n := callTorchScatter - callTorchAllReduce + 1 + callTorchMonitoredBarrier + 1 - callTorchAllGatherIntoTensor; len(colls) != n {
		t.Errorf("COLLECTIVES has %d calls, Go %d", len(colls), n)
	}
	if v := num(`(?m)^VERSION = (\d+)`); v != segVersion {
		t.Errorf("VERSION %d, Go %d", v, segVersion)
	}
	if v := num(`(?m)^HDR = (\d+)`); v != segHdrSize {
		t.Errorf("HDR %d, Go %d", v, segHdrSize)
	}
	if m := regexp.MustCompile(`(?m)^DEVICES, DEVICES_LEN = (\d+), (\d+)$`).FindStringSubmatch(src); m == nil || m[1] != strconv.Itoa(segDevicesOff) || m[2] != strconv.Itoa(segDevicesLen) {
		t.Errorf("torchrec.py's DEVICES, DEVICES_LEN %v, Go %d, %d", m, segDevicesOff, segDevicesLen)
	}
	if v := num(`F_ADDR, F_SPAN, F_SITE = range\((\d+), `); 1<<(v+2) != fSite {
		t.Errorf("F_SITE bit %d, Go %#x", v+2, fSite)
	}
	var offs []int
	for _, m := range regexp.MustCompile(`pack_into\("<I", self\.mm, (\d+), site\)`).FindAllStringSubmatch(src, -1) {
		n, _ := strconv.Atoi(m[1])
		offs = append(offs, n)
	}
	if !slices.Equal(offs, []int{976, 980}) {
		t.Errorf("site id offsets %v in the header, want 976 (current call) and 980 (error)", offs)
	}
	for name, want := range map[string]int{"C_SEND": callTorchSend, "C_RECV": callTorchRecv, "C_ISEND": callTorchIsend,
		"C_IRECV": callTorchIrecv, "C_BATCH": callTorchBatch, "C_WAIT": callTorchWait, "C_BARRIER": callTorchBarrier,
		"C_EXCEPTION": callPyException, "C_EXIT": callPyExit} {
		m := regexp.MustCompile(`(?m)^(C_[A-Z_, ]+) = ([\d, ]+)$`).FindAllStringSubmatch(src, -1)
		found := false
		for _, line := range m {
			names, vals := strings.Split(line[1], ", "), strings.Split(line[2], ", ")
			for i, n := range names {
				if n == name && i < len(vals) {
					found = true
					if v, _ := strconv.Atoi(vals[i]); v != want {
						t.Errorf("%s = %d in torchrec.py, %d in Go", name, v, want)
					}
				}
			}
		}
		if !found {
			t.Errorf("%s: not in torchrec.py", name)
		}
	}
}
