// Package proc ends process trees that are not ours to wait for: the ranks
// an MPI launcher started, which run in process groups of their own and are
// reparented when the launcher dies. It reads Linux's /proc.
package proc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// stat returns the fields of /proc/PID/stat after the command name: state,
// ppid, pgrp, session, ... (the name may hold spaces and parentheses).
func stat(pid string) []string {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// Running reports whether pid is a live process: it exists and is not a
// zombie waiting for its parent to reap it.
func Running(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	f := stat(strconv.Itoa(pid))
	return len(f) > 0 && f[0] != "Z"
}

// Session lists the live processes of session sid (a process started with
// Setsid leads the session whose id is its pid).
func Session(sid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := strconv.Itoa(sid)
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := stat(e.Name()); len(f) >= 4 && f[3] == want && f[0] != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// KillSession sends SIGKILL to every live process of session sid and returns
// how many it signalled.
func KillSession(sid int) int {
	pids := Session(sid)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(pids)
}

// Children lists the live child processes of pid.
func Children(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := strconv.Itoa(pid)
	var pids []int
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := stat(e.Name()); len(f) >= 2 && f[1] == want && f[0] != "Z" {
			pids = append(pids, child)
		}
	}
	return pids
}

// Faults returns the page faults pid has taken (minor and major), and false
// if it cannot be read (no such process here). A process that touches
// memory it did not touch before faults; one that waits, or spins on memory
// it has, does not: the hang monitor tells a rank at work inside a long
// call (a window of gigabytes being allocated) from one that waits.
func Faults(pid int) (uint64, bool) {
	f := stat(strconv.Itoa(pid))
	if len(f) < 10 {
		return 0, false
	}
	minflt, err1 := strconv.ParseUint(f[7], 10, 64)
	majflt, err2 := strconv.ParseUint(f[9], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return minflt + majflt, true
}
