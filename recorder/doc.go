// Package recorder records runs of programs built on package gpu into trace
// files (the format lives in recorder/trace) and summarizes them.
//
// A program records itself when P2PTRACE_TRACE names a file: gpu.Launch then
// writes every call and transfer there. Record sets that up for a Go main
// package directory or an executable, as `p2ptrace record` does:
//
//	sum, err := recorder.Record(ctx, recorder.Options{Program: "./testdata/train/pingpong", Output: "trace.db"})
//
// SIGINT and SIGTERM are forwarded to the program, which flushes and marks
// its trace; a program killed outright leaves a trace whose status is still
// "running", which readers report as cut short and use as far as it goes.
package recorder
