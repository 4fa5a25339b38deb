package proc

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary plays the launcher and its rank when re-executed with
// PROC_TEST_ROLE set.
func TestMain(m *testing.M) {
	switch os.Getenv("PROC_TEST_ROLE") {
	case "leader":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "PROC_TEST_ROLE=child")
		child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := child.Start(); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(strconv.Itoa(child.Process.Pid) + "\n")
		child.Wait()
		os.Exit(0)
	case "child":
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestKillSessionEndsChildrenInOtherGroups: a launcher leading a session of
// its own starts a child in a process group of its own (as mpirun does with
// its ranks); killing the session ends both, and Running says so.
func TestKillSessionEndsChildrenInOtherGroups(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PROC_TEST_ROLE=leader")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	sid := cmd.Process.Pid
	if pg, _ := syscall.Getpgid(child); pg == sid {
		t.Fatalf("the child runs in the leader's process group %d; the test needs another", pg)
	}
	if !Running(child) || !Running(sid) {
		t.Fatal("the session's processes do not run")
	}
	if n := KillSession(sid); n < 2 {
		t.Fatalf("%d processes signalled, want the shell and its child", n)
	}
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for Running(child) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if Running(child) {
		syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("child %d of session %d outlived KillSession", child, sid)
	}
	if !Running(os.Getpid()) {
		t.Fatal("Running(self) = false")
	}
}

// TestFaultsCountFreshMemory: touching 16 MiB it never touched adds at least
// a fault a page to the process's count; a process that is not there has
// none to read.
func TestFaultsCountFreshMemory(t *testing.T) {
	before, ok := Faults(os.Getpid())
	if !ok {
		t.Fatal("Faults of this process: not read")
	}
	mem, err := syscall.Mmap(-1, 0, 16<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	_ = syscall.Madvise(mem, 15) // MADV_NOHUGEPAGE: a fault a page, whatever the machine's THP setting
	page := os.Getpagesize()
	for i := 0; i < len(mem); i += page {
		mem[i] = 1
	}
	after, _ := Faults(os.Getpid())
	if want := before + uint64(len(mem)/page); after < want {
		t.Errorf("faults %d -> %d after touching %d pages, want at least %d", before, after, len(mem)/page, want)
	}
	if _, ok := Faults(1 << 30); ok {
		t.Error("Faults of a pid that does not exist: read")
	}
}
