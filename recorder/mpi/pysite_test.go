package mpi

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pythonRecs is rank r of a torch.distributed head-to-head, as the Python
// recorder writes it: site records (id in Module, line in Count, "file NUL
// function" in Path) and posts naming them.
func pythonRecs(peer int32) []record {
	return []record{
		{Type: recSite, Module: 1, Count: 11, Path: "train.py\x00step"},
		{Type: recPost, Call: callTorchSend, Op: 1, Site: 1, Peer: peer, Dtype: 8, Count: 16, Bytes: 64, T0: 10, Hash: 0x55},
	}
}

// writePython writes a 2-rank job of version v, both blocked in dist.send at site 1.
func writePython(t *testing.T, dir string, v uint32) {
	t.Helper()
	for r := range int32(2) {
		b := encodeSegment(r, 2, StateBlocked, pythonRecs(1-r))
		le := binary.LittleEndian
		le.PutUint32(b[8:], v)
		le.PutUint32(b[84:], callTorchSend)
		le.PutUint32(b[976:], 1)
		copy(b[128:], "torch.distributed gloo (torch 1.13.1)\x00")
		if err := os.WriteFile(SegmentPath(dir, int(r)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMergePythonSites(t *testing.T) {
	dir := t.TempDir()
	writePython(t, dir, 3)
	out := filepath.Join(dir, "t.db")
	res, err := Merge(dir, out, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Backend != "torch.distributed gloo (torch 1.13.1)" || res.Header.EagerLimit != 0 {
		t.Errorf("header: backend %q, eager %d", res.Header.Backend, res.Header.EagerLimit)
	}
	for _, re := range res.Ranks {
		if re.State != StateBlocked || re.Blocked != "dist.send" || re.Site != "train.py:11" {
			t.Errorf("rank %d: %+v, want blocked in dist.send at train.py:11", re.Rank, re)
		}
	}
	_, _, sites := loadTrace(t, out)
	if len(sites) == 0 {
		t.Fatal("no sites in the trace")
	}
	found := false
	for _, s := range sites {
		if s.File == "train.py" && s.Line == 11 && s.Function == "step" {
			found = true
		}
	}
	if !found {
		t.Errorf("sites %+v, want train.py:11 in step", sites)
	}
}

func TestMergePythonSiteInVersion2Refused(t *testing.T) {
	dir := t.TempDir()
	writePython(t, dir, 2)
	_, err := Merge(dir, filepath.Join(dir, "t.db"), MergeOptions{})
	if !errors.Is(err, ErrSegment) || !strings.Contains(err.Error(), "site record in a version 2 segment") {
		t.Fatalf("err %v, want ErrSegment: site record in a version 2 segment", err)
	}
	dir = t.TempDir()
	writePython(t, dir, 4)
	_, err = Merge(dir, filepath.Join(dir, "t.db"), MergeOptions{})
	if !errors.Is(err, ErrSegment) || !strings.Contains(err.Error(), "version 4 (this p2ptrace reads version 3)") {
		t.Fatalf("err %v, want ErrSegment about version 4", err)
	}
}

// TestPythonSitePath: the module path the shim gives an mpi4py call line.
func TestPythonSitePath(t *testing.T) {
	for _, tc := range []struct {
		path string
		file string
		line int
		ok   bool
	}{
		{"/work/prog.py:12", "/work/prog.py", 12, true},
		{"/a:b/prog.py:3", "/a:b/prog.py", 3, true},
		{"/usr/lib/libmpi.so.40", "", 0, false},
		{"/work/prog.py:0", "", 0, false},
		{"/work/prog.pyc:4", "", 0, false},
	} {
		file, line, ok := pythonSite(tc.path)
		if file != tc.file || line != tc.line || ok != tc.ok {
			t.Errorf("pythonSite(%q) = %q, %d, %v; want %q, %d, %v", tc.path, file, line, ok, tc.file, tc.line, tc.ok)
		}
	}
}
