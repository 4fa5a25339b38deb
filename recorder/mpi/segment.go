package mpi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/p2ptrace/p2ptrace/internal/regfile"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// EnvSegDir names the directory where the shim writes one segment per rank.
// Without it the shim only forwards to PMPI.
const EnvSegDir = "P2PTRACE_SEGDIR"

// EnvHash selects the payload hashing of the shim: full (default), sample or off.
const EnvHash = "P2PTRACE_HASH"

// RankState is what a rank is doing, as its segment header says.
type RankState uint32

// States of a rank.
const (
	StateRunning   RankState = iota + 1 // in user code
	StateBlocked                        // inside a blocking MPI call
	StateFinalized                      // MPI_Finalize returned
	StateAborted                        // called MPI_Abort
	StateErrored                        // an MPI call failed (the error handler aborted the job)
	StateSignaled                       // killed by a fatal signal (SIGSEGV...): ErrClass is the signal
	StateExited                         // exited without MPI_Finalize: ErrClass is its exit status
)

func (s RankState) String() string {
	switch s {
	case StateRunning:
		return "running"
	case StateBlocked:
		return "blocked"
	case StateFinalized:
		return "finalized"
	case StateAborted:
		return "aborted"
	case StateErrored:
		return "errored"
	case StateSignaled:
		return "signaled"
	case StateExited:
		return "exited"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// LiveState is the live header of a rank's segment.
type LiveState struct {
	Rank, Size, PID int
	State           RankState
	Calls           uint64 // grows with every intercepted call
	Blocked         string // the MPI call, e.g. "MPI_Recv", when State is StateBlocked
	// PollFrom..PollTo (calls, PollTo 0 if none) were polls that found
	// nothing (MPI_Test*, MPI_Iprobe answering no).
	PollFrom, PollTo uint64
}

// Polling reports whether the rank has made only fruitless polls since call
// PollFrom (it may be in the next one): polling without success since then.
// The hang monitor counts such a rank as blocked, and PollFrom as its
// progress.
func (s LiveState) Polling() bool {
	return s.State == StateRunning && s.PollTo != 0 && s.Calls <= s.PollTo+1
}

// Segment layout constants (see FORMAT in doc.go); TestShimConstants checks
// them, and every other constant the shim shares with Go, against p2ptrace_shim.c.
const (
	segMagic   = "P2PTSEG1"
	segVersion = 3 // the shim and the Python recorder write 3; version 2 (an older shim) reads too
	segHdrSize = 4096
	// segDevicesOff is where the Python recorder notes the devices of the
	// rank's tensors (segDevicesLen bytes, NUL terminated; zero from the shim).
	segDevicesOff = 984
	segDevicesLen = 32
	// segErrRejectedOff is where the shim says the failed call was refused
	// for its arguments (a uint32, nonzero; zero from older shims and the
	// Python recorder).
	segErrRejectedOff = 1016
)

// Record types.
const (
	recPost   = 1
	recDone   = 2
	recModule = 3
	recComm   = 4
	recSite   = 5 // version 3: a source site (Python file:line)
	recWrite  = 6 // version 3: a pending receive's buffer the program wrote, or a pending op's buffer it released (Op: writeFrame, writeFreed; see releasedFindings) (Seq: its post; Call, PC: the call that saw it)
	recRMA    = 7 // version 3: a window made, or a one-sided access (see rmaFindings)
	recFree   = 8 // version 3: an object the program freed (Call: the free call; Comm: its id; see resourceLeaks)
	recObj    = 9 // version 3: a datatype, group or reduction op the program made (Comm: its id; Tag: its kind)
)

// The Op of a write record (the shim's WRITE_*): the program wrote the
// buffer of a pending receive (recvWriteFindings), or released the buffer
// of a pending operation: the stack frame that held it returned, or free()
// released the heap block it starts (Flag; PC: where free() was called).
// See releasedFindings.
const (
	writeProgram = iota
	writeFrame
	writeFreed
)

// Call codes of the shim (enum C_* in p2ptrace_shim.c).
const (
	callNone = iota
	callInit
	callInitThread
	callFinalize
	callAbort
	callCommRank
	callCommSize
	callCommDup
	callCommSplit
	callCommFree
	callSend
	callSsend
	callBsend
	callRsend
	callRecv
	callIsend
	callIssend
	callIbsend
	callIrsend
	callIrecv
	callWait
	callWaitall
	callWaitany
	callWaitsome
	callTest
	callTestall
	callTestany
	callTestsome
	callRequestFree
	callSendInit
	callSsendInit
	callBsendInit
	callRsendInit
	callRecvInit
	callStart
	callStartall
	callSendrecv
	callSendrecvReplace
	callProbe
	callIprobe
	callBarrier
	callBufferAttach
	callBufferDetach
	// The calls of the Python recorder (torch.distributed), from 43.
	callTorchInit
	callTorchDestroy
	callTorchNewGroup
	callTorchSend
	callTorchRecv
	callTorchIsend
	callTorchIrecv
	callTorchBatch
	callTorchWait
	callTorchIsCompleted
	callTorchBarrier
	callPyException
	callPyExit
	callTorchAllReduce
	callTorchBroadcast
	callTorchAllGather
	callTorchReduce
	callTorchReduceScatter
	callTorchAllToAll
	callTorchGather
	callTorchScatter
	// The MPI-3 matched probes, from 64 (appended: older segments still
	// read). Merge folds a probe and the receive of its message into one
	// receive (foldMatched).
	callMprobe
	callImprobe
	callMrecv
	callImrecv
	// MPI_Cancel, from 68: a Cancel op naming the request (whether it took
	// is on the request's done, its flag).
	callCancel
	// The blocking collectives, from 69 (appended), recorded as trace
	// OpBcast..OpExscan.
	callBcast
	callReduce
	callAllreduce
	callGather
	callGatherv
	callScatter
	callScatterv
	callAllgather
	callAllgatherv
	callAlltoall
	callAlltoallv
	callReduceScatter
	callReduceScatterBlock
	callScan
	callExscan
	// The nonblocking collectives, from 84 (appended), recorded as trace
	// OpIbarrier..OpIexscan, each with its request.
	callIbarrier
	callIbcast
	callIreduce
	callIallreduce
	callIgather
	callIgatherv
	callIscatter
	callIscatterv
	callIallgather
	callIallgatherv
	callIalltoall
	callIalltoallv
	callIreduceScatter
	callIreduceScatterBlock
	callIscan
	callIexscan
	// More calls of the Python recorder, from 100: torch.distributed's
	// single-tensor collectives and gloo's monitored barrier.
	callTorchAllGatherIntoTensor
	callTorchReduceScatterTensor
	callTorchAllToAllSingle
	callTorchMonitoredBarrier
	// Blocking calls the shim marks (the rank is blocked in MPI, at the
	// call's line) but does not record, from 104 (appended): collectives
	// the trace has no op for, and the collective calls that make
	// communicators and windows. A rank that hangs in one is named there.
	callNeighborAllgather
	callNeighborAllgatherv
	callNeighborAlltoall
	callNeighborAlltoallv
	callNeighborAlltoallw
	callAlltoallw
	callCommCreate
	callCommSplitType
	callCommCreateGroup
	callIntercommCreate
	callIntercommMerge
	callCartCreate
	callCartSub
	callGraphCreate
	callDistGraphCreate
	callDistGraphCreateAdjacent
	callWinCreate
	callWinAllocate
	callWinFence
	callWinFree
	// MPI_Request_get_status, recorded when it finds its request pending
	// (as a fruitless MPI_Test).
	callRequestGetStatus
	// One-sided communication (MPI-3.1 chapter 11), marked as the calls
	// from 104 are, from 125: the two other collective calls that make
	// windows, the RMA communication calls, and the synchronization calls
	// (a rank blocked in MPI_Win_wait or MPI_Win_unlock is named there).
	callWinAllocateShared
	callWinCreateDynamic
	callPut
	callGet
	callAccumulate
	callGetAccumulate
	callFetchAndOp
	callCompareAndSwap
	callRput
	callRget
	callRaccumulate
	callRgetAccumulate
	callWinLock
	callWinUnlock
	callWinLockAll
	callWinUnlockAll
	callWinFlush
	callWinFlushAll
	callWinFlushLocal
	callWinFlushLocalAll
	callWinSync
	callWinPost
	callWinStart
	callWinComplete
	callWinWait
	// From 150: the calls that make and free datatypes, groups and
	// reduction ops, marked, and recorded for resource leaks (obj and free
	// records: resourceLeaks).
	callTypeContiguous
	callTypeVector
	callTypeCreateHvector
	callTypeIndexed
	callTypeCreateHindexed
	callTypeCreateIndexedBlock
	callTypeCreateHindexedBlock
	callTypeCreateStruct
	callTypeCreateSubarray
	callTypeCreateDarray
	callTypeCreateResized
	callTypeDup
	callTypeFree
	callCommGroup
	callCommRemoteGroup
	callGroupIncl
	callGroupExcl
	callGroupRangeIncl
	callGroupRangeExcl
	callGroupUnion
	callGroupIntersection
	callGroupDifference
	callWinGetGroup
	callGroupFree
	callOpCreate
	callOpFree
	callCommDisconnect
	callCount
)

// torchCall reports whether call c is the Python recorder's (the shim
// knows none of them).
func torchCall(c int) bool {
	return c >= callTorchInit && c <= callTorchScatter || c >= callTorchAllGatherIntoTensor && c <= callTorchMonitoredBarrier
}

var callNames = [callCount]string{
	"", "MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Abort", "MPI_Comm_rank", "MPI_Comm_size",
	"MPI_Comm_dup", "MPI_Comm_split", "MPI_Comm_free", "MPI_Send", "MPI_Ssend", "MPI_Bsend",
	"MPI_Rsend", "MPI_Recv", "MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend", "MPI_Irecv",
	"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall",
	"MPI_Testany", "MPI_Testsome", "MPI_Request_free", "MPI_Send_init", "MPI_Ssend_init",
	"MPI_Bsend_init", "MPI_Rsend_init", "MPI_Recv_init", "MPI_Start", "MPI_Startall",
	"MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Probe", "MPI_Iprobe", "MPI_Barrier",
	"MPI_Buffer_attach", "MPI_Buffer_detach",
	"dist.init_process_group", "dist.destroy_process_group", "dist.new_group", "dist.send", "dist.recv",
	"dist.isend", "dist.irecv", "dist.batch_isend_irecv", "Work.wait", "Work.is_completed",
	"dist.barrier", "uncaught exception", "exit", "dist.all_reduce", "dist.broadcast",
	"dist.all_gather", "dist.reduce", "dist.reduce_scatter", "dist.all_to_all", "dist.gather",
	"dist.scatter", "MPI_Mprobe", "MPI_Improbe", "MPI_Mrecv", "MPI_Imrecv", "MPI_Cancel",
	"MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv",
	"MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Reduce_scatter",
	"MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan",
	"MPI_Ibarrier", "MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce", "MPI_Igather", "MPI_Igatherv", "MPI_Iscatter",
	"MPI_Iscatterv", "MPI_Iallgather", "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ireduce_scatter",
	"MPI_Ireduce_scatter_block", "MPI_Iscan", "MPI_Iexscan",
	"dist.all_gather_into_tensor", "dist.reduce_scatter_tensor", "dist.all_to_all_single", "dist.monitored_barrier",
	"MPI_Neighbor_allgather", "MPI_Neighbor_allgatherv", "MPI_Neighbor_alltoall", "MPI_Neighbor_alltoallv",
	"MPI_Neighbor_alltoallw", "MPI_Alltoallw", "MPI_Comm_create", "MPI_Comm_split_type", "MPI_Comm_create_group",
	"MPI_Intercomm_create", "MPI_Intercomm_merge", "MPI_Cart_create", "MPI_Cart_sub", "MPI_Graph_create",
	"MPI_Dist_graph_create", "MPI_Dist_graph_create_adjacent", "MPI_Win_create", "MPI_Win_allocate",
	"MPI_Win_fence", "MPI_Win_free", "MPI_Request_get_status",
	"MPI_Win_allocate_shared", "MPI_Win_create_dynamic", "MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate",
	"MPI_Fetch_and_op", "MPI_Compare_and_swap", "MPI_Rput", "MPI_Rget", "MPI_Raccumulate", "MPI_Rget_accumulate",
	"MPI_Win_lock", "MPI_Win_unlock", "MPI_Win_lock_all", "MPI_Win_unlock_all", "MPI_Win_flush", "MPI_Win_flush_all",
	"MPI_Win_flush_local", "MPI_Win_flush_local_all", "MPI_Win_sync", "MPI_Win_post", "MPI_Win_start",
	"MPI_Win_complete", "MPI_Win_wait",
	"MPI_Type_contiguous", "MPI_Type_vector", "MPI_Type_create_hvector", "MPI_Type_indexed", "MPI_Type_create_hindexed",
	"MPI_Type_create_indexed_block", "MPI_Type_create_hindexed_block", "MPI_Type_create_struct", "MPI_Type_create_subarray", "MPI_Type_create_darray",
	"MPI_Type_create_resized", "MPI_Type_dup", "MPI_Type_free", "MPI_Comm_group", "MPI_Comm_remote_group", "MPI_Group_incl", "MPI_Group_excl",
	"MPI_Group_range_incl", "MPI_Group_range_excl", "MPI_Group_union", "MPI_Group_intersection", "MPI_Group_difference", "MPI_Win_get_group",
	"MPI_Group_free", "MPI_Op_create", "MPI_Op_free", "MPI_Comm_disconnect",
}

// CollectiveCall reports whether name, as RankEnd.Blocked names a call,
// is a collective call: one that every member of its communicator makes
// (MPI's blocking collectives, those that make communicators and windows,
// MPI_Win_fence and MPI_Win_free, torch.distributed's collectives; not a
// poll, nor one-sided communication and its other synchronization calls).
func CollectiveCall(name string) bool {
	c := slices.Index(callNames[:], name)
	switch {
	case c < 0:
		return false
	case c == callBarrier, c == callCommDup, c == callCommSplit, c >= callBcast && c <= callExscan:
		return true
	case c >= callTorchAllReduce && c <= callTorchScatter, c == callTorchBarrier, c == callTorchNewGroup,
		c >= callTorchAllGatherIntoTensor && c <= callTorchMonitoredBarrier:
		return true
	case c >= callNeighborAllgather && c <= callWinFree, c == callWinAllocateShared, c == callWinCreateDynamic:
		return true
	}
	return false
}

// RMASyncCall reports whether name, as RankEnd.Blocked names a call, is
// a one-sided synchronization call that waits for other ranks' calls
// (MPI-3.1 sec. 11.5): MPI_Win_wait for the MPI_Win_complete of each rank
// its MPI_Win_post named, MPI_Win_start or MPI_Win_complete for their
// targets' MPI_Win_post, a lock or a flush for the locks other ranks hold.
func RMASyncCall(name string) bool {
	switch c := slices.Index(callNames[:], name); {
	case c >= callWinLock && c <= callWinFlushLocalAll, c >= callWinStart && c <= callWinWait:
		return true
	}
	return false
}

// RMASyncHint is the hint of a hang with a rank blocked in an RMASyncCall.
const RMASyncHint = "match each rank's one-sided synchronization with its peers': an MPI_Win_post's group calls MPI_Win_start and MPI_Win_complete before its MPI_Win_wait returns, an access epoch opened by MPI_Win_start needs the target's MPI_Win_post, and a lock waits while another rank holds the target's lock (MPI-3.1 sec. 11.5)"

func callName(c uint32) string {
	if c < callCount {
		return callNames[c]
	}
	return "call(" + strconv.Itoa(int(c)) + ")"
}

// SegmentPath is the segment file of a world rank in dir.
func SegmentPath(dir string, rank int) string {
	return filepath.Join(dir, "rank-"+strconv.Itoa(rank)+".seg")
}

// ErrSegment is wrapped by every error about a damaged or foreign segment.
var ErrSegment = errors.New("not a valid p2ptrace MPI segment")

// errUninitialized is a segment the rank created but whose header it never
// finished (it was killed inside MPI_Init): the magic is written last.
var errUninitialized = fmt.Errorf("%w: header never written (the rank ended inside MPI_Init)", ErrSegment)

// segHeader is the decoded fixed header of a segment.
type segHeader struct {
	Version    uint32
	Rank, Size int32
	PID        int32
	State      RankState
	Calls      uint64
	Used       uint64
	StartUnix  int64
	StartMono  int64
	EndUnix    int64
	Eager      int64
	HashMode   uint32
	CurCall    uint32
	CurPC      uint64
	CurModule  uint32
	Thread     uint32
	ErrClass   int32
	ErrCall    uint32
	ErrPC      uint64
	ErrModule  uint32
	Library    string
	Error      string
	ErrName    string // the failed MPI function when the shim does not record it (ErrCall 0)
	PollFrom   uint64
	PollTo     uint64
	CurSite    uint32 // version 3: site id of the current call (0 = none)
	ErrSite    uint32 // version 3: site id of the error
	Devices    string // version 3, Python recorder: the devices of the rank's tensors ("cpu", "cpu,cuda:0")

	// BsendOverhead is the MPI's MPI_BSEND_OVERHEAD (at 124), from a shim
	// that records MPI_Buffer_attach/detach (0 before: padding).
	BsendOverhead uint32

	// ErrRejected says the failed call (ErrCall) was refused for a bad
	// argument: its error class is one of the argument checks' (count,
	// type, tag, communicator, rank, request, root, group, op, argument),
	// so it took no effect and the merge leaves it out of the trace.
	ErrRejected bool
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// parseHeader decodes the first segHdrSize bytes of a segment.
func parseHeader(b []byte) (segHeader, error) {
	var h segHeader
	if len(b) == 0 {
		// Created, not yet sized: the shim (and the Python recorder) size
		// the file to its header and more at once, before writing it, and
		// the rank was taken down in between (another rank aborted as it
		// started, and the launcher killed the job).
		return h, errUninitialized
	}
	if len(b) < segHdrSize {
		return h, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrSegment, len(b), segHdrSize)
	}
	if string(b[:8]) != segMagic {
		if bytes.Equal(b[:8], make([]byte, 8)) {
			return h, errUninitialized
		}
		return h, fmt.Errorf("%w: bad magic %q", ErrSegment, b[:8])
	}
	le := binary.LittleEndian
	h.Version = le.Uint32(b[8:])
	if h.Version != segVersion && h.Version != 2 {
		return h, fmt.Errorf("%w: version %d (this p2ptrace reads version %d)", ErrSegment, h.Version, segVersion)
	}
	if hs := le.Uint32(b[12:]); hs != segHdrSize {
		return h, fmt.Errorf("%w: header size %d", ErrSegment, hs)
	}
	h.Rank = int32(le.Uint32(b[16:]))
	h.Size = int32(le.Uint32(b[20:]))
	h.PID = int32(le.Uint32(b[24:]))
	h.State = RankState(le.Uint32(b[28:]))
	h.Calls = le.Uint64(b[32:])
	h.Used = le.Uint64(b[40:])
	h.StartUnix = int64(le.Uint64(b[48:]))
	h.StartMono = int64(le.Uint64(b[56:]))
	h.EndUnix = int64(le.Uint64(b[64:]))
	h.Eager = int64(le.Uint64(b[72:]))
	h.HashMode = le.Uint32(b[80:])
	h.CurCall = le.Uint32(b[84:])
	h.CurPC = le.Uint64(b[88:])
	h.CurModule = le.Uint32(b[96:])
	h.Thread = le.Uint32(b[100:])
	h.ErrClass = int32(le.Uint32(b[104:]))
	h.ErrCall = le.Uint32(b[108:])
	h.ErrPC = le.Uint64(b[112:])
	h.ErrModule = le.Uint32(b[120:])
	h.BsendOverhead = le.Uint32(b[124:])
	h.Library = cstring(b[128:384])
	h.Error = cstring(b[384:896])
	h.ErrName = cstring(b[896:960])
	h.PollFrom = le.Uint64(b[960:])
	h.PollTo = le.Uint64(b[968:])
	if h.Version >= 3 {
		h.CurSite = le.Uint32(b[976:])
		h.ErrSite = le.Uint32(b[980:])
		h.Devices = cstring(b[segDevicesOff : segDevicesOff+segDevicesLen])
		h.ErrRejected = le.Uint32(b[segErrRejectedOff:]) != 0
	}
	if h.Size <= 0 || h.Size > maxWorld || h.Rank < 0 || h.Rank >= h.Size {
		return h, fmt.Errorf("%w: rank %d of size %d", ErrSegment, h.Rank, h.Size)
	}
	if h.State < StateRunning || h.State > StateExited {
		return h, fmt.Errorf("%w: state %d", ErrSegment, h.State)
	}
	return h, nil
}

// ReadLiveState reads the live header of a segment: cheap (one read of 4 KiB),
// safe while the rank writes it. Before the rank created the file the error
// is os.ErrNotExist (also while the header is not yet valid); a foreign or
// torn file is an error wrapping ErrSegment, never a panic.
func ReadLiveState(path string) (LiveState, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return LiveState{}, err
	}
	defer f.Close()
	var buf [segHdrSize]byte
	n, err := io.ReadFull(f, buf[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return LiveState{}, err
	}
	if n == 0 || n >= 8 && bytes.Equal(buf[:8], make([]byte, 8)) {
		// Created but not yet initialized by the rank (the magic is written last).
		return LiveState{}, fmt.Errorf("segment %s: header not written yet: %w", path, os.ErrNotExist)
	}
	h, err := parseHeader(buf[:n])
	if err != nil {
		return LiveState{}, fmt.Errorf("segment %s: %w", path, err)
	}
	ls := LiveState{Rank: int(h.Rank), Size: int(h.Size), PID: int(h.PID), State: h.State, Calls: h.Calls, PollFrom: h.PollFrom, PollTo: h.PollTo}
	if h.State == StateBlocked {
		ls.Blocked = callName(h.CurCall)
	}
	return ls, nil
}

// record is one decoded record of a segment.
type record struct {
	Type    uint8
	Call    uint8
	Op      uint8
	Dtype   uint8
	Flag    bool
	Err     uint8
	Seq     uint32
	Module  uint32
	Peer    int32
	Tag     int32
	Comm    int32
	Index   int32
	Count   int64
	Bytes   int64
	T0, T1  uint64
	PC      uint64
	Req     uint64
	Hash    uint64
	Source  int32
	StatTag int32
	SCount  int64
	Reqs    []uint64 // post/done: request ids; comm: world ranks
	Path    string   // module; site: file NUL function
	Addr    uint64   // post: first byte of its buffer when dense (0: none or not dense)
	Span    int64    // post: the buffer's length in bytes
	Site    uint32   // the post's site id (site records: Module is the id, Count the line)
	Sig     []sigRun // post: the type signature of one element of a mixed derived datatype (Dtype opaque)
	Addr2   uint64   // post of a collective: its receive buffer, as Addr and Span (Addr: its send buffer)
	Span2   int64
	Frame   uint64 // post with a buffer: the frame pointer of the function that made the call
	// Heap, Heap2: the size of the heap block Addr, Addr2 starts (0: not one the shim knows)
	Heap, Heap2 int64
	// CType, CType2: the C type of the datatype of Addr's, Addr2's elements (cType; 0: not compared)
	CType, CType2 cType
}

// sigRun is a run of a type signature: N basic elements of type Dtype.
type sigRun struct {
	Dtype trace.Dtype
	N     int64
}

// segment is a whole decoded segment.
type segment struct {
	path    string
	hdr     segHeader
	recs    []record
	uninit  bool // created, but the rank ended before writing the header
	missing bool // not even created: the rank ended before (uninit too)
}

// maxWorld bounds the world size a segment header may claim (a trace's
// limit too): the merge works per rank of the world.
const maxWorld = 1 << 24

// maxSegment bounds the record area the decoder accepts.
const maxSegment = 1 << 40

// Field bits of a record's mask (see FORMAT).
const (
	fOp = 1 << iota
	fDtype
	fFlag
	fErr
	fSeq
	fModule
	fPeer
	fTag
	fComm
	fIndex
	fCount
	fBytes
	fT0
	fT1
	fPC
	fReq
	fHash
	fSource
	fStag
	fSCount
	fReqs
	fPath
	fAddr // with fSpan: the buffer's range
	fSpan
	fSite
	fSig   // the shim's: the type signature of a mixed derived datatype
	fFrame // the shim's: the calling function's frame pointer (a post with a buffer)
	fAddr2 // the shim's: a collective's receive buffer (address and length)
	fHeap  // the shim's: the heap blocks the buffers start (their sizes)
	fCType // the shim's: the C types of the buffers' datatypes
	fAll   = 1<<iota - 1
)

// recReader reads the fields of one record.
type recReader struct {
	b   []byte
	err error
}

func (d *recReader) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errors.New("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *recReader) zz() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *recReader) zz32() int32 {
	v := d.zz()
	if int64(int32(v)) != v && d.err == nil {
		d.err = fmt.Errorf("value %d out of range", v)
	}
	return int32(v)
}

func (d *recReader) byte1() uint8 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 1 {
		d.err = errors.New("record too short")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *recReader) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errors.New("record too short")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// decodeSegment decodes a whole segment file's contents.
func decodeSegment(b []byte) (*segment, error) {
	h, err := parseHeader(b)
	if err != nil {
		return nil, err
	}
	s := &segment{hdr: h}
	area := b[segHdrSize:]
	if h.Used > uint64(len(area)) || h.Used > maxSegment {
		return nil, fmt.Errorf("%w: header says %d bytes of records, the file holds %d", ErrSegment, h.Used, len(area))
	}
	area = area[:h.Used]
	// Count the records first, so that the slice is allocated once, exactly.
	count := 0
	for off := 0; off+4 <= len(area); count++ {
		n := int(binary.LittleEndian.Uint32(area[off:]) & (1<<24 - 1))
		if n < 6 {
			break // reported below
		}
		off += n
	}
	s.recs = make([]record, 0, count)
	var seq uint32
	var lastT uint64
	bases := map[uint32]uint64{}
	for off := 0; off < len(area); {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%w: record at offset %d: %s", ErrSegment, segHdrSize+off, fmt.Sprintf(format, args...))
		}
		rest := area[off:]
		if len(rest) < 6 {
			return nil, bad("%d bytes left, a record takes at least 6", len(rest))
		}
		w := binary.LittleEndian.Uint32(rest)
		n := int(w & (1<<24 - 1))
		if n < 6 || n > len(rest) {
			return nil, bad("bad length %d", n)
		}
		r := record{Type: uint8(w >> 24), Call: rest[4]}
		d := &recReader{b: rest[5:n]}
		mask := d.uvarint()
		if mask&^fAll != 0 {
			return nil, bad("unknown fields %#x", mask&^fAll)
		}
		if mask&fOp != 0 {
			r.Op = d.byte1()
		}
		if mask&fDtype != 0 {
			r.Dtype = d.byte1()
		}
		if mask&fFlag != 0 {
			r.Flag = d.byte1() != 0
		}
		if mask&fErr != 0 {
			r.Err = d.byte1()
		}
		if mask&fSeq != 0 {
			v := d.uvarint()
			if v > 1<<32-1 {
				return nil, bad("seq %d", v)
			}
			r.Seq = uint32(v)
		}
		if mask&fModule != 0 {
			v := d.uvarint()
			if v > 1<<32-1 {
				return nil, bad("module %d", v)
			}
			r.Module = uint32(v)
		}
		if mask&fPeer != 0 {
			r.Peer = d.zz32()
		}
		if mask&fTag != 0 {
			r.Tag = d.zz32()
		}
		if mask&fComm != 0 {
			r.Comm = d.zz32()
		}
		if mask&fIndex != 0 {
			r.Index = d.zz32()
		}
		if mask&fCount != 0 {
			r.Count = d.zz()
		}
		if mask&fBytes != 0 {
			r.Bytes = d.zz()
		}
		if mask&fT0 != 0 {
			r.T0 = lastT + uint64(d.zz())
		}
		if mask&fT1 != 0 {
			base := lastT
			if mask&fT0 != 0 {
				base = r.T0
			}
			r.T1 = base + uint64(d.zz())
		}
		var pcoff uint64
		if mask&fPC != 0 {
			pcoff = d.uvarint()
		}
		if mask&fReq != 0 {
			r.Req = d.uvarint()
		}
		if mask&fHash != 0 {
			if hb := d.bytes(8); hb != nil {
				r.Hash = binary.LittleEndian.Uint64(hb)
			}
		}
		if mask&fSource != 0 {
			r.Source = d.zz32()
		}
		if mask&fStag != 0 {
			r.StatTag = d.zz32()
		}
		if mask&fSCount != 0 {
			r.SCount = d.zz()
		}
		if mask&fReqs != 0 {
			cnt := d.uvarint()
			if cnt > uint64(len(d.b)) { // each takes at least one byte
				return nil, bad("%d trailer entries in %d bytes", cnt, len(d.b))
			}
			r.Reqs = make([]uint64, cnt)
			var prev uint64
			for i := range r.Reqs {
				prev += uint64(d.zz())
				r.Reqs[i] = prev
			}
		}
		if mask&fPath != 0 {
			r.Path = string(d.bytes(d.uvarint()))
		}
		if mask&fAddr != 0 {
			r.Addr = d.uvarint()
		}
		if mask&fSpan != 0 {
			r.Span = int64(d.uvarint() & (1<<62 - 1))
		}
		if mask&fSite != 0 {
			v := d.uvarint()
			if v > 1<<32-1 {
				return nil, bad("site %d", v)
			}
			r.Site = uint32(v)
		}
		if mask&fSig != 0 {
			cnt := d.uvarint()
			if cnt > uint64(len(d.b))/2 { // each takes at least two bytes
				return nil, bad("%d signature runs in %d bytes", cnt, len(d.b))
			}
			r.Sig = make([]sigRun, cnt)
			for i := range r.Sig {
				r.Sig[i] = sigRun{Dtype: trace.Dtype(d.byte1()), N: int64(d.uvarint() & (1<<62 - 1))}
			}
		}
		if mask&fFrame != 0 {
			r.Frame = d.uvarint()
		}
		if mask&fAddr2 != 0 {
			r.Addr2 = d.uvarint()
			r.Span2 = int64(d.uvarint() & (1<<62 - 1))
		}
		if mask&fHeap != 0 {
			r.Heap = int64(d.uvarint() & (1<<62 - 1))
			r.Heap2 = int64(d.uvarint() & (1<<62 - 1))
		}
		if mask&fCType != 0 {
			r.CType = cType(d.uvarint())
			r.CType2 = cType(d.uvarint())
		}
		if d.err != nil {
			return nil, bad("%v", d.err)
		}
		if len(d.b) != 0 {
			return nil, bad("%d bytes after the fields", len(d.b))
		}
		if r.Call >= callCount {
			return nil, bad("unknown call %d", r.Call)
		}
		switch r.Type {
		case recModule:
			r.PC = pcoff
			bases[r.Module] = pcoff
		case recSite:
			if h.Version < 3 {
				return nil, bad("site record in a version %d segment", h.Version)
			}
		case recPost, recDone, recComm, recWrite, recRMA, recFree, recObj:
			if pcoff != 0 {
				base, ok := bases[r.Module]
				if !ok {
					return nil, bad("pc in module %d before its module record", r.Module)
				}
				r.PC = base + pcoff
			}
		default:
			return nil, bad("unknown type %d", r.Type)
		}
		switch {
		case mask&fT1 != 0:
			lastT = r.T1
		case mask&fT0 != 0:
			lastT = r.T0
		}
		switch r.Type {
		case recPost:
			r.Seq = seq
			seq++
		case recDone, recWrite:
			if r.Seq >= seq {
				return nil, bad("done of call %d before its post", r.Seq)
			}
		}
		s.recs = append(s.recs, r)
		off += n
	}
	return s, nil
}

// readSegment reads and decodes the segment file path; errors name the file.
func readSegment(path string) (*segment, error) {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := decodeSegment(b)
	if err != nil {
		return nil, fmt.Errorf("segment %s: %w", path, err)
	}
	s.path = path
	return s, nil
}
