package trace_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/damage"
	"github.com/p2ptrace/p2ptrace/internal/regfile"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// A FIFO or a device given as a trace is refused at once (a FIFO's open
// used to block for ever, /dev/zero was "the file is empty").
func TestSpecialFilesRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.p2ptrace")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:        fifo + ": not a regular file (it is a FIFO)",
		"/dev/zero": "/dev/zero: not a regular file (it is a character device)",
	} {
		done := make(chan error, 1)
		go func() { _, err := trace.Open(path); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, trace.ErrNotTrace) || !errors.Is(err, regfile.ErrNotRegular) || err.Error() != want {
				t.Errorf("Open(%s) = %v, want %q", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Open(%s) hangs", path)
		}
	}
}

// recordingChild is the writer of TestBeingRecorded, in a process of its
// own (the lock is per open file, and the real case is another process):
// it appends and flushes until its stdin closes, then completes the trace.
func recordingChild(path string) {
	w, err := trace.Create(path, trace.Header{WorldSize: 2}, fastOpts)
	if err != nil {
		fmt.Println("create:", err)
		os.Exit(1)
	}
	stop := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stop) }()
	fmt.Println("READY")
	evs := ring(2, 50)
	var seq uint64
	for {
		select {
		case <-stop:
			if err := w.Close(trace.StatusComplete, ""); err != nil {
				fmt.Println("close:", err)
				os.Exit(1)
			}
			os.Exit(0)
		default:
		}
		for i := range evs {
			ev := evs[i]
			ev.Seq += seq
			if ev.Kind == trace.KindDone {
				ev.MatchSeq += seq
			}
			w.Append(&ev)
		}
		seq += 100
		w.Flush()
	}
}

func TestMain(m *testing.M) {
	if p := os.Getenv("P2PTRACE_RECORDING_CHILD"); p != "" {
		recordingChild(p)
	}
	if p := os.Getenv("P2PTRACE_KILLED_CHILD"); p != "" {
		killedWriterChild(p)
	}
	os.Exit(m.Run())
}

// A trace another process is writing is "being recorded (by pid N)", never
// damaged; once the writer ends it reads sound.
func TestBeingRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.p2ptrace")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "P2PTRACE_RECORDING_CHILD="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "READY\n" {
		t.Fatalf("child: %q", line)
	}
	want := "trace " + path + ": trace file is locked by another process: it is being recorded (by pid " + strconv.Itoa(cmd.Process.Pid) + "); read it once the recording ends"
	for i := 0; i < 2; i++ {
		r, err := trace.Open(path)
		if err == nil {
			r.Close()
			t.Fatal("opened a trace while it is being written")
		}
		if !errors.Is(err, trace.ErrLocked) || errors.Is(err, trace.ErrDamaged) || err.Error() != want {
			t.Fatalf("attempt %d: %v\nwant %s", i, err, want)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if res, err := r.VerifyResult(); err != nil || res.Events == 0 {
		t.Fatalf("after the recording: %+v %v", res, err)
	}
}

// A header that claims millions of ranks (valid checksum) or events filed
// under rank 16,777,215 are refused by Open as inconsistent, quickly and in
// little memory: readers allocate per rank.
func TestHugeRankCountsRefused(t *testing.T) {
	dir := t.TempDir()
	sound := filepath.Join(dir, "sound")
	writeTrace(t, sound, trace.Header{WorldSize: 2}, fastOpts, ring(2, 3))
	b, err := os.ReadFile(sound)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, header string
		rank         uint32 // a block filed under this rank, if not 0
		want         string
	}{
		{"complete", `{"format_version":1,"ranks":16777215,"status":"complete","events":12,"rank_events":[6,6]}`, 0,
			"inconsistent header: 16777215 ranks, but rank_events counts 2"},
		{"running", `{"format_version":1,"ranks":16777215,"status":"running"}`, 0,
			"inconsistent header: 16777215 ranks in a cut trace of 28672 bytes (at most 2816)"},
		{"complete-rank", `{"format_version":1,"ranks":2,"status":"complete","events":12,"rank_events":[6,6]}`, 16777215,
			"inconsistent header: events of rank 16777215, but rank_events counts 2 ranks"},
		{"running-rank", `{"format_version":1,"ranks":2,"status":"running"}`, 16777215,
			"inconsistent header: 16777216 ranks in a cut trace of 65536 bytes (at most 5120)"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := damage.SetHeaderJSON(path, tc.header); err != nil {
			t.Fatal(err)
		}
		if tc.rank != 0 {
			if err := damage.AddRankBlock(path, tc.rank, []byte("block")); err != nil {
				t.Fatal(err)
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := trace.Open(path)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, trace.ErrDamaged) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Open = %v, want %q", tc.name, err, tc.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
			t.Errorf("%s: Open allocated %d bytes for a %d-byte file", tc.name, alloc, len(b))
		}
	}
}

// Create and SetHeader refuse a world size no trace can hold, rather than
// dying in Close.
func TestCreateHugeWorldSize(t *testing.T) {
	dir := t.TempDir()
	_, err := trace.Create(filepath.Join(dir, "a"), trace.Header{WorldSize: 1 << 40}, fastOpts)
	if err == nil || !strings.Contains(err.Error(), "world size 1099511627776 out of range") {
		t.Fatalf("Create = %v", err)
	}
	w, err := trace.Create(filepath.Join(dir, "b"), trace.Header{WorldSize: 2}, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	w.SetHeader(func(h *trace.Header) { h.WorldSize = 1 << 40 })
	err = w.Close(trace.StatusComplete, "")
	if err == nil || !strings.Contains(err.Error(), "world size 1099511627776 out of range (0 to 16777216), kept 2") {
		t.Fatalf("Close = %v", err)
	}
	r, err := trace.Open(filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Header().WorldSize != 2 {
		t.Errorf("world size %d", r.Header().WorldSize)
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"main.go":                  "main.go",
		"héllo, 世界":                "héllo, 世界",
		"\x1b]0;owned\x07":         `\x1b]0;owned\x07`,
		"a\nb\tc\rd":               `a\nb\tc\rd`,
		"\x1b[2J\x7f\u0085":        `\x1b[2J\x7f\x85`,
		"evil\u202egnp.go":         `evil\u202egnp.go`,
		"bad \xff\xfe utf8":        `bad \xff\xfe utf8`,
		`back\slash`:               `back\slash`,
		"\U0001F600 and \u200b.go": `😀 and \u200b.go`,
	} {
		if got := trace.Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
	if got := trace.PrintableText("line 1\nline\x1b[2J 2"); got != "line 1\nline\\x1b[2J 2" {
		t.Errorf("PrintableText = %q", got)
	}
}

// Strings leave the Reader escaped; UpdateHeader keeps the stored ones.
func TestReaderEscapesTraceStrings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.p2ptrace")
	w, err := trace.Create(path, trace.Header{WorldSize: 1, Command: []string{"prog", "\x1b]0;owned\x07"}, Backend: "sim\x1b[2J"}, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	w.AddSite(trace.Site{ID: 1, Function: "main.\x1b[31mf", File: "a\x1b[2J.go", Line: 3})
	if err := w.Close(trace.StatusComplete, "line 1\nline \x1b[2J2"); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		r, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		h := r.Header()
		s, _ := r.Site(1)
		got := []string{h.Command[1], h.Backend, h.Message, s.Function, s.File}
		want := []string{`\x1b]0;owned\x07`, `sim\x1b[2J`, "line 1\nline \\x1b[2J2", `main.\x1b[31mf`, `a\x1b[2J.go`}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %q\nwant %q", got, want)
		}
	}
	check()
	if err := trace.UpdateHeader(path, func(h *trace.Header) {}); err != nil {
		t.Fatal(err)
	}
	check() // not escaped twice
}

// A tree page turned into a branch page without elements whose (absent)
// element 0 points at itself: bbolt reads element 0 anyway and descends
// for ever, growing its stack until memory runs out (found by FuzzOpen).
func TestEmptyBranchPageRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.p2ptrace")
	opts := fastOpts
	opts.BlockSize = 256
	writeTrace(t, path, trace.Header{WorldSize: 1}, opts, ring(1, 3000))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const ps = 4096
	refused := 0
	for id := 2; (id+1)*ps <= len(b) && refused == 0; id++ {
		p := b[id*ps:]
		if binary.LittleEndian.Uint64(p) != uint64(id) || binary.LittleEndian.Uint16(p[8:]) != 0x02 {
			continue
		}
		bad := append([]byte(nil), b...)
		q := bad[id*ps:]
		binary.LittleEndian.PutUint16(q[8:], 0x01) // branch
		binary.LittleEndian.PutUint16(q[10:], 0)   // no elements
		binary.LittleEndian.PutUint64(q[16+8:], uint64(id))
		p2 := filepath.Join(dir, strconv.Itoa(id))
		os.WriteFile(p2, bad, 0o644)
		done := make(chan error, 1)
		go func() { done <- exercise(p2) }()
		select {
		case err := <-done:
			if err != nil && strings.Contains(err.Error(), "a branch page without elements") {
				refused++
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("page %d: Open hangs", id)
		}
	}
	if refused == 0 {
		t.Fatal("no tree page found to damage")
	}
}

// Create with Force over a FIFO refuses at once (taking the old file's lock
// opened it, and blocked).
func TestCreateOverFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := trace.Create(fifo, trace.Header{}, trace.WriterOptions{Force: true})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, regfile.ErrNotRegular) || err.Error() != "create trace: "+fifo+": not a regular file (it is a FIFO)" {
			t.Errorf("Create = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Create over a FIFO hangs")
	}
}
