package trace

import "errors"

// Sentinel errors. The errors the package returns wrap one of these (test
// with errors.Is) and name the file and what is wrong with it.
var (
	// ErrExists: Create was asked to write a file that exists, without Force.
	ErrExists = errors.New("trace file exists")
	// ErrLocked: a writer (usually another process) holds the file: Create
	// refuses it, Open reports it as being recorded, naming the writer's pid.
	ErrLocked = errors.New("trace file is locked by another process")
	// ErrNotTrace: the file is empty, not a bbolt file, or a bbolt file that
	// is not a p2ptrace trace.
	ErrNotTrace = errors.New("not a p2ptrace trace")
	// ErrDamaged: the file is a trace but truncated, fails a checksum, or is
	// otherwise inconsistent.
	ErrDamaged = errors.New("trace is damaged")
	// ErrNewerVersion: the trace was written by a newer p2ptrace, in a format
	// version this one does not read.
	ErrNewerVersion = errors.New("trace format version is newer than supported")
	// ErrClosed: the Writer or Reader was closed.
	ErrClosed = errors.New("trace is closed")
)
