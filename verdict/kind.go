package verdict

import "slices"

// Kind names a kind of finding. The strings are part of the JSON report and
// of the trace format: never rename one.
type Kind string

// The kinds of finding. KindInfo documents each: what it means, and which
// doors can produce it.
const (
	Deadlock         Kind = "deadlock"
	Hang             Kind = "hang"
	UnmatchedSend    Kind = "unmatched-send"
	Truncation       Kind = "truncation"
	TypeMismatch     Kind = "type-mismatch"
	CountMismatch    Kind = "count-mismatch"
	CorruptedData    Kind = "corrupted-data"
	InFlightMutation Kind = "in-flight-mutation"
	MissingWait      Kind = "missing-wait"
	ReadyWithoutRecv Kind = "ready-without-recv"
	InvalidCall      Kind = "invalid-call"
	MessageRace      Kind = "message-race"
	UnsafeBuffering  Kind = "unsafe-buffering"
	Crash            Kind = "crash"
	RankError        Kind = "rank-error"
	NoProgress       Kind = "no-progress"
	BufferOverlap    Kind = "buffer-overlap"
	RequestLeak      Kind = "request-leak"
	RecvBufferWrite  Kind = "recv-buffer-write"
	BsendBuffer      Kind = "bsend-buffer"
	// CollectiveMismatch: the k-th collective calls of a communicator's
	// members differ (kind, root, size, datatype or reduction op), or some
	// members finished without making it.
	CollectiveMismatch Kind = "collective-mismatch"
	// RMAConflict: two one-sided accesses of one epoch touch the same
	// bytes of a window and one writes (MPI-3.1 sec. 11.7).
	RMAConflict Kind = "rma-conflict"
	// ResourceLeak: a communicator, window, datatype, group or reduction
	// op the program made was never freed before MPI_Finalize (MPI-3.1
	// sec. 8.7).
	ResourceLeak Kind = "resource-leak"
	// BufferOverrun: a call's buffer, count elements of its datatype from
	// buf, runs past the end of the program variable buf points into
	// (MPI-3.1 secs. 3.2.2, 3.2.4).
	BufferOverrun Kind = "buffer-overrun"
	// HostTypeMismatch: a call's datatype does not name the C type of the
	// variable its buffer holds (MPI-3.1 sec. 3.3.1).
	HostTypeMismatch Kind = "host-type-mismatch"
	// ReleasedBuffer: the program released a pending operation's buffer,
	// or a window's memory while the window lived: the stack frame that
	// held it returned, or free() released its heap block.
	ReleasedBuffer Kind = "released-buffer"
)

// Doors that can produce a finding, as KindInfo.Doors lists them.
const (
	DoorLive    = "live"    // gpu.Launch, p2ptrace record, harness.Run's runs
	DoorMerge   = "merge"   // p2ptrace record -n / merge of an MPI job
	DoorReplay  = "replay"  // p2ptrace replay, check, harness's check battery
	DoorHarness = "harness" // harness.Run
)

// KindInfo documents one kind.
type KindInfo struct {
	Kind    Kind
	Meaning string
	Doors   []string // which doors can produce it
	Hint    string   // how to fix it, as reports print it
}

// kindTable documents every kind; it is read, never written (Kinds hands
// out copies), so that a finding's hint costs no allocation.
var kindTable = [...]KindInfo{
	{Deadlock, "no rank can progress and the blocked ranks wait for each other: a cycle in the wait-for graph", []string{DoorLive, DoorMerge, DoorReplay, DoorHarness},
		"reorder the calls so that one rank receives first, or use Sendrecv, or Isend+Irecv+Waitall"},
	{Hang, "no rank can progress, with no cycle: a rank waits for a message nobody sends, for a rank that finished, or polls (Test, Iprobe) for a message that cannot come", []string{DoorLive, DoorMerge, DoorReplay, DoorHarness},
		"check the peer rank and tag of the waiting call against the nearest candidate"},
	{UnmatchedSend, "a message was sent that no receive ever took before the program ended", []string{DoorLive, DoorReplay, DoorHarness},
		"post a matching receive on the destination rank, or remove the send"},
	{Truncation, "a receive buffer is smaller than the message it matched", []string{DoorLive, DoorMerge, DoorReplay, DoorHarness},
		"make the receive buffer at least as large as the largest message it can match"},
	{TypeMismatch, "the two ends of a message use different datatypes", []string{DoorLive, DoorMerge, DoorReplay, DoorHarness},
		"use the same datatype on both ends"},
	{CountMismatch, "a stream send and its recv (NCCL style) disagree on the element count", []string{DoorLive, DoorMerge, DoorReplay, DoorHarness},
		"stream send and recv of a pair must have the same count and datatype"},
	{CorruptedData, "a receiver got data other than what was sent: the send buffer was rewritten while in flight, and the replay read it at the latest legal moment (mutate)", []string{DoorReplay, DoorHarness},
		"do not write a send buffer until its request completed (Wait or Test)"},
	{InFlightMutation, "a nonblocking send's buffer, a nonblocking collective's send buffer, or a one-sided Put's or Accumulate's origin buffer, changed between its call and its completion (payload hashes differ)", []string{DoorLive, DoorMerge, DoorHarness},
		"do not write a send buffer until its request completed (Wait or Test)"},
	{MissingWait, "a request was never completed (Wait/Test), or a receive's or nonblocking collective's request was freed while still active (MPI-3.1 sec. 3.7.3: freeing an active send is legitimate), or a stream never synchronized, before the rank finished", []string{DoorLive, DoorMerge, DoorReplay, DoorHarness},
		"Wait (or Test until done) every request, and Synchronize every stream, before reusing buffers or finishing"},
	{ReadyWithoutRecv, "a ready send (Rsend) started before its receive was posted, or nothing but timing posted the receive first (MPI-3.1 sec. 3.4)", []string{DoorLive, DoorMerge, DoorReplay, DoorHarness},
		"post the receive before the ready send (e.g. behind a barrier), or use Send"},
	{InvalidCall, "a call broke a rule of the API: an invalid rank, tag, count (a negative one) or datatype, MPI_Start of a persistent request still active, GroupEnd without GroupStart, an MPI error", []string{DoorLive, DoorMerge, DoorReplay, DoorHarness},
		"check the arguments of the call against the communicator's size and the API's rules"},
	{MessageRace, "a wildcard (AnySource) receive can legally match another sender, and that order makes the program hang or fail", []string{DoorReplay, DoorHarness},
		"receive from a specific source, or make the program independent of arrival order"},
	{UnsafeBuffering, "a standard send completes only because the runtime buffered it, or a collective only because it did not synchronize: with zero buffering (sync: every collective synchronizes) the program deadlocks", []string{DoorReplay, DoorHarness},
		"the send completes only while the runtime buffers it: use Isend+Irecv+Waitall or Sendrecv, or reorder"},
	{Crash, "a rank died: it panicked, called MPI_Abort, hit a fatal error or was killed, at its last recorded call", []string{DoorLive, DoorMerge, DoorReplay, DoorHarness},
		"read the crash message; the line is the rank's last runtime call before it died"},
	{RankError, "a rank's function returned an error of its own (its check of the data failed, or it passed a call's error on)", []string{DoorLive, DoorHarness},
		"the program's own check failed: look for a missing Wait, a race or corrupted data that explains the values"},
	{BufferOverlap, "two pending operations of one rank use buffers that share bytes and one of them writes (a receive), or Sendrecv's send and receive buffers overlap: the MPI standard forbids it", []string{DoorLive, DoorMerge, DoorHarness},
		"give each pending operation its own buffer, or complete one (Wait) before posting the other; Sendrecv_replace exchanges in place"},
	{RequestLeak, "a persistent request (MPI_Send_init, MPI_Recv_init) was never freed before MPI_Finalize", []string{DoorMerge},
		"MPI_Request_free every persistent request once it is no longer started"},
	{RecvBufferWrite, "the program wrote a receive buffer while its receive was pending (after the Irecv, MPI_Start, nonblocking collective, stream recv, MPI_Get, or an accumulate that fetches (its result buffer), before the Wait, Test, Synchronize or one-sided synchronization that completes it): the write or the message is lost", []string{DoorLive, DoorMerge, DoorHarness},
		"do not touch a receive buffer until its request completed (Wait, Test) or its stream was synchronized"},
	{BsendBuffer, "a buffered send (Bsend, Ibsend, a started Bsend_init) did not fit in the space the rank attached (MPI_Buffer_attach) with its buffered messages not yet transmitted, or no space was attached", []string{DoorLive, DoorReplay, DoorHarness},
		"MPI_Buffer_attach enough space (MPI_Pack_size + MPI_BSEND_OVERHEAD per message in flight) or use Isend"},
	{CollectiveMismatch, "the members of a communicator disagree on a collective call: its k-th collective call is not the same collective (or not with the same root, not of the same size or basic datatype, or not with the same predefined reduction op) on every rank, or some members finished without making it (MPI-3.1 sec. 5.1, 5.4 ff., 5.9.1)", []string{DoorMerge, DoorReplay},
		"make every rank of the communicator call the same collectives in the same order, with the same root, matching counts and datatypes, and the same reduction op"},
	{RMAConflict, "two one-sided accesses (MPI_Put, MPI_Get, MPI_Accumulate...) of one fence epoch, of shared lock epochs that no message or collective orders, or of start epochs open at the same time (an origin's buffer in its own window counting as an access of it), touch the same bytes of a target's window and one of them writes, other than accumulates with one op and one basic datatype: the outcome is undefined (MPI-3.1 sec. 11.7)", []string{DoorMerge},
		"separate the accesses by a synchronization (an MPI_Win_fence between them, or exclusive locks), make them touch disjoint bytes, or use MPI_Accumulate with one op and datatype on both"},
	{ResourceLeak, "a communicator (MPI_Comm_dup, MPI_Comm_split...), window (MPI_Win_create...), datatype (MPI_Type_contiguous...), group (MPI_Comm_group, MPI_Group_incl...) or reduction op (MPI_Op_create) that the program made was never freed before its rank called MPI_Finalize, which does not free objects made by MPI calls (MPI-3.1 sec. 8.7)", []string{DoorMerge},
		"free each object the program made with its free call (MPI_Comm_free, MPI_Win_free, MPI_Type_free, MPI_Group_free, MPI_Op_free) once it is done with it, before MPI_Finalize"},
	{BufferOverrun, "a call's buffer, count elements of its datatype from its address (MPI-3.1 secs. 3.2.2, 3.2.4: a send buffer is count entries of the datatype from buf, a receive buffer the storage of count of them), runs past the end of the program's variable it points into: a local of the calling function or a global, known from the program's debug info (built with -g; locals in code gcc built without optimization, -O0, its default), or the heap block it starts (its size noted at malloc, calloc or realloc)", []string{DoorMerge},
		"make the variable large enough for count elements of the datatype (count x its extent bytes), or pass a smaller count or the datatype the variable holds"},
	{HostTypeMismatch, "a call's predefined datatype does not name the C type of the elements of the program variable its buffer lies in (MPI-3.1 sec. 3.3.1: the type of each variable in a buffer matches the type its datatype names; MPI_BYTE and MPI_PACKED match any type, and 1-byte types, C's bytes, any on either side): MPI_UNSIGNED on an int, MPI_FLOAT on an int of the same size; known from the program's debug info as buffer-overrun's variables are", []string{DoorMerge},
		"pass the datatype that names the variable's type (MPI_INT for int, MPI_UNSIGNED for unsigned int, MPI_DOUBLE for double...), or MPI_BYTE to move raw bytes"},
	{ReleasedBuffer, "the program released a buffer of a pending nonblocking send, receive or collective (MPI-3.1 secs. 3.7.2, 5.12: it is the library's until the request completes), or the memory of a window before MPI_Win_free (sec. 11.2.5: the window memory can be freed when MPI_Win_free returns): the function whose local variable held it returned, or free() released the heap block it starts; the library then reads or writes memory that belongs to something else", []string{DoorMerge},
		"keep the buffer alive until the request completes (Wait or Test before the function returns, or a buffer that outlives it: a static, the heap, the caller's), and free a window's memory only after MPI_Win_free"},
	{NoProgress, "a rank stopped calling the runtime for longer than the wall-clock timeout (it spins or blocks in code of its own)", []string{DoorLive, DoorHarness},
		"the rank is busy or blocked outside p2ptrace after its last call: a loop, a lock or a channel of its own"},
}

// Kinds lists every kind, documented.
func Kinds() []KindInfo {
	out := make([]KindInfo, len(kindTable))
	for i, k := range kindTable {
		k.Doors = slices.Clone(k.Doors)
		out[i] = k
	}
	return out
}

// Info returns the documentation of k (ok false for an unknown kind).
func (k Kind) Info() (KindInfo, bool) {
	for _, i := range kindTable {
		if i.Kind == k {
			i.Doors = slices.Clone(i.Doors)
			return i, true
		}
	}
	return KindInfo{}, false
}

// Hint returns the fix hint of k ("" for an unknown kind).
func (k Kind) Hint() string {
	for _, i := range kindTable {
		if i.Kind == k {
			return i.Hint
		}
	}
	return ""
}

// Known reports whether k is one of Kinds.
func (k Kind) Known() bool {
	_, ok := k.Info()
	return ok
}

// Stuck reports whether k says the run could not progress.
func (k Kind) Stuck() bool { return k == Deadlock || k == Hang }
