package trace

import (
	"strconv"

	"github.com/p2ptrace/p2ptrace/verdict"
)

// Op is the kind of runtime call an event records.
type Op uint8

// The ops of a trace. The numbering is part of the file format: append only.
const (
	OpInvalid     Op = iota
	OpSend           // blocking standard send
	OpSsend          // blocking synchronous send
	OpBsend          // blocking buffered send
	OpRsend          // blocking ready send
	OpRecv           // blocking receive
	OpIsend          // nonblocking standard send
	OpIssend         // nonblocking synchronous send
	OpIbsend         // nonblocking buffered send
	OpIrsend         // nonblocking ready send
	OpIrecv          // nonblocking receive
	OpWait           // wait for one request (Reqs[0])
	OpWaitall        // wait for all of Reqs
	OpWaitany        // wait for any of Reqs; Index is the one that completed
	OpTest           // test one request; Flag says whether it was complete
	OpTestall        // test all of Reqs; Flag says whether all were complete
	OpFree           // Request.Free of Reqs[0]
	OpSendrecv       // the send half of a Sendrecv (the recv half follows as OpRecv with the same Site)
	OpStreamSend     // NCCL-style send enqueued on Stream
	OpStreamRecv     // NCCL-style recv enqueued on Stream
	OpSynchronize    // Stream.Synchronize of Stream
	OpGroupStart     // GroupStart
	OpGroupEnd       // GroupEnd
	OpCompute        // Compute(Duration) of the rank's own time
	OpFinalize       // the rank's function returned
	OpBarrier        // barrier (MPI traces)
	OpProbe          // blocking probe (MPI traces)
	OpIprobe         // nonblocking probe (MPI traces); Flag is the result
	// OpCancel marks the request Reqs[0] for cancellation (MPI_Cancel). The
	// request is still completed by a Wait, Test or Free; whether the
	// cancellation took is on that op's own Done event (Flag).
	OpCancel
	// OpBufferAttach attaches Count bytes of buffer space for the rank's
	// buffered sends (MPI_Buffer_attach); OpBufferDetach takes it back,
	// once every buffered message is transmitted (MPI_Buffer_detach).
	OpBufferAttach
	OpBufferDetach
	// The blocking MPI collectives other than Barrier, one op each (so that
	// every report names them through String): Peer is the root's world
	// rank (NoRank for collectives without one), Tag the caller's rank in
	// Comm, Count the size of Comm (as OpBarrier's), Bytes the caller's
	// side of the type signature (see package recorder/mpi) and Dtype its
	// type; a reduction's (IsReduction) Stream is its ReduceOp.
	OpBcast
	OpReduce
	OpAllreduce
	OpGather
	OpGatherv
	OpScatter
	OpScatterv
	OpAllgather
	OpAllgatherv
	OpAlltoall
	OpAlltoallv
	OpReduceScatter
	OpReduceScatterBlock
	OpScan
	OpExscan
	// The nonblocking collectives (MPI-3.1 sec. 5.12), one op each, in the
	// order of their blocking forms (Blocking), fields as theirs, and Req
	// the request the call returned: it is completed by a Wait or Test as
	// an Isend's is. OpIbarrier's fields are OpBarrier's.
	OpIbarrier
	OpIbcast
	OpIreduce
	OpIallreduce
	OpIgather
	OpIgatherv
	OpIscatter
	OpIscatterv
	OpIallgather
	OpIallgatherv
	OpIalltoall
	OpIalltoallv
	OpIreduceScatter
	OpIreduceScatterBlock
	OpIscan
	OpIexscan
	opCount
)

var opNames = [...]string{
	OpInvalid: "invalid", OpSend: "Send", OpSsend: "Ssend", OpBsend: "Bsend", OpRsend: "Rsend",
	OpRecv: "Recv", OpIsend: "Isend", OpIssend: "Issend", OpIbsend: "Ibsend", OpIrsend: "Irsend",
	OpIrecv: "Irecv", OpWait: "Wait", OpWaitall: "Waitall", OpWaitany: "Waitany", OpTest: "Test",
	OpTestall: "Testall", OpFree: "Request.Free", OpSendrecv: "Sendrecv",
	OpStreamSend: "Stream.Send", OpStreamRecv: "Stream.Recv", OpSynchronize: "Stream.Synchronize",
	OpGroupStart: "GroupStart", OpGroupEnd: "GroupEnd", OpCompute: "Compute", OpFinalize: "Finalize",
	OpBarrier: "Barrier", OpProbe: "Probe", OpIprobe: "Iprobe", OpCancel: "Cancel",
	OpBufferAttach: "Buffer_attach", OpBufferDetach: "Buffer_detach",
	OpBcast: "Bcast", OpReduce: "Reduce", OpAllreduce: "Allreduce", OpGather: "Gather", OpGatherv: "Gatherv",
	OpScatter: "Scatter", OpScatterv: "Scatterv", OpAllgather: "Allgather", OpAllgatherv: "Allgatherv",
	OpAlltoall: "Alltoall", OpAlltoallv: "Alltoallv", OpReduceScatter: "Reduce_scatter",
	OpReduceScatterBlock: "Reduce_scatter_block", OpScan: "Scan", OpExscan: "Exscan",
	OpIbarrier: "Ibarrier", OpIbcast: "Ibcast", OpIreduce: "Ireduce", OpIallreduce: "Iallreduce",
	OpIgather: "Igather", OpIgatherv: "Igatherv", OpIscatter: "Iscatter", OpIscatterv: "Iscatterv",
	OpIallgather: "Iallgather", OpIallgatherv: "Iallgatherv", OpIalltoall: "Ialltoall",
	OpIalltoallv: "Ialltoallv", OpIreduceScatter: "Ireduce_scatter",
	OpIreduceScatterBlock: "Ireduce_scatter_block", OpIscan: "Iscan", OpIexscan: "Iexscan",
}

// String returns the API name of the op, such as "Isend" or "Stream.Recv".
func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// Valid reports whether o is a known op.
func (o Op) Valid() bool { return o > OpInvalid && o < opCount }

// IsCollective reports whether the op is a collective of a communicator
// (Barrier, Bcast, ... Exscan, and their nonblocking forms Ibarrier ...
// Iexscan).
func (o Op) IsCollective() bool {
	return o == OpBarrier || (o >= OpBcast && o <= OpExscan) || o.IsNonblockingCollective()
}

// IsNonblockingCollective reports whether the op is a nonblocking
// collective (Ibarrier ... Iexscan): a call that returns a request at once.
func (o Op) IsNonblockingCollective() bool { return o >= OpIbarrier && o <= OpIexscan }

// Blocking is the blocking form of a nonblocking collective (Ibcast:
// Bcast), o itself for any other op: the data each call moves, and so what
// it waits for, are its blocking form's.
func (o Op) Blocking() Op {
	switch {
	case o == OpIbarrier:
		return OpBarrier
	case o > OpIbarrier && o <= OpIexscan:
		return o - OpIbcast + OpBcast
	}
	return o
}

// IsSend reports whether the op posts a message to Peer.
func (o Op) IsSend() bool { return o < 64 && sendOps>>o&1 != 0 }

// IsRecv reports whether the op posts a receive from Peer.
func (o Op) IsRecv() bool { return o < 64 && recvOps>>o&1 != 0 }

// The sets of IsSend and IsRecv, as bit masks: a replay asks per event.
const (
	sendOps = 1<<OpSend | 1<<OpSsend | 1<<OpBsend | 1<<OpRsend | 1<<OpIsend | 1<<OpIssend |
		1<<OpIbsend | 1<<OpIrsend | 1<<OpSendrecv | 1<<OpStreamSend
	recvOps = 1<<OpRecv | 1<<OpIrecv | 1<<OpStreamRecv
)

// Kind says which of the two event records of an op an Event is.
type Kind uint8

const (
	// KindPost is written when the call is made, in program order: everything the
	// caller passed in. A replay is driven by the post events alone.
	KindPost Kind = 1
	// KindDone is written when a message op completes (or, for calls that only
	// block, when they return): match, times, status and hashes. It always
	// follows the post event of the same (Rank, Seq).
	KindDone Kind = 2
)

// Wildcards and "none" values of the envelope fields.
const (
	AnySource = -1
	AnyTag    = -1
	NoRank    = -1 // e.g. Event.MatchRank of an op that never matched
	ProcNull  = -2 // MPI_PROC_NULL as a peer: the op completes at once, moving nothing
)

// Dtype is an element type of a buffer. Values are part of the file format.
type Dtype uint8

const (
	DtypeNone Dtype = iota
	Uint8
	Int32
	Int64
	Float32
	Float64
	// Opaque is an MPI datatype p2ptrace does not know (derived types); Size is
	// then whatever the recorder was told.
	Opaque
)

var dtypeNames = [...]string{DtypeNone: "none", Uint8: "uint8", Int32: "int32", Int64: "int64", Float32: "float32", Float64: "float64", Opaque: "opaque"}
var dtypeSizes = [...]int{DtypeNone: 0, Uint8: 1, Int32: 4, Int64: 8, Float32: 4, Float64: 8, Opaque: 1}

func (d Dtype) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return "Dtype(" + strconv.Itoa(int(d)) + ")"
}

// Size is the size of one element in bytes.
func (d Dtype) Size() int {
	if int(d) < len(dtypeSizes) {
		return dtypeSizes[d]
	}
	return 0
}

// Event is one record of a trace. An op of a rank is identified by (Rank, Seq):
// Seq counts that rank's calls from 0 in program order. Fields that do not apply
// to an op are zero (NoRank for ranks).
type Event struct {
	Kind Kind
	Rank int32
	Seq  uint64
	Op   Op

	// Envelope and buffer, set on KindPost.
	Peer   int32 // destination of a send, requested source of a recv (AnySource)
	Tag    int32 // AnyTag on a wildcard recv
	Comm   int32 // communicator id; 0 is the world
	Stream int32 // stream id for stream ops (0 = the rank's default stream); a reduction collective's ReduceOp
	Group  int32 // group nesting depth at post (0 = outside a group)
	Dtype  Dtype
	Count  int64  // elements
	Bytes  int64  // Count * element size
	Alloc  uint32 // buffer identity: allocation id (0 = none), offset and length in bytes
	Offset int64
	Length int64
	Req    uint64   // request id created by a nonblocking op (0 = none)
	Reqs   []uint64 // requests waited/tested/freed by the wait family
	Site   uint32   // index into the call-site table (0 = unknown)
	// Duration is the declared compute time of OpCompute, in virtual ns.
	Duration int64

	// Times, virtual ns since the start of the run; wall ns since the start of the run.
	PostVT   int64 // on KindPost
	PostWall int64 // on KindPost
	MatchVT  int64 // on KindDone: when the op was matched with its peer op
	DoneVT   int64 // on KindDone
	DoneWall int64 // on KindDone

	// Outcome, set on KindDone.
	MatchRank int32  // the peer op this op matched (NoRank if none)
	MatchSeq  uint64 //
	Source    int32  // status: actual source of a recv
	StatusTag int32  // status: actual tag of a recv
	StatusCnt int64  // status: received element count
	// Flag is the result of a Test, Testall or Iprobe; on the Done event of
	// a message op with a request, that the op was cancelled (OpCancel,
	// MPI_Test_cancelled): it moved no message, and its status names none.
	// (Traces from before OpCancel never set it there.)
	Flag  bool
	Index int32 // Waitany: index into Reqs of the completed request
	Err   ErrCode

	// Payload hashes (0 = not hashed). HashPost is taken at post (sends: the send
	// buffer); HashDone at completion (sends: the send buffer again, so a
	// difference is an in-flight mutation; recvs: the delivered data).
	HashPost uint64
	HashDone uint64
}

// ErrCode is an error an op ended with. Values are part of the file format.
type ErrCode uint8

const (
	ErrNone          ErrCode = iota
	ErrTruncate              // receive buffer smaller than the message
	ErrTypeMismatch          // datatypes of the two ends differ
	ErrCountMismatch         // stream send/recv counts differ
	ErrReadyNoRecv           // ready send without a posted receive
	ErrStuck                 // the run stopped while this op was blocked
	ErrFreedActive           // request freed while active
	ErrInvalid               // invalid argument (rank, tag, count...)
)

// The names of op errors that are kinds of finding are those kinds (package verdict).
var errNames = [...]string{ErrNone: "", ErrTruncate: string(verdict.Truncation), ErrTypeMismatch: string(verdict.TypeMismatch), ErrCountMismatch: string(verdict.CountMismatch),
	ErrReadyNoRecv: string(verdict.ReadyWithoutRecv), ErrStuck: "stuck", ErrFreedActive: "freed-while-active", ErrInvalid: "invalid"}

func (c ErrCode) String() string {
	if int(c) < len(errNames) {
		return errNames[c]
	}
	return "ErrCode(" + strconv.Itoa(int(c)) + ")"
}

// Site is one entry of the call-site table.
type Site struct {
	ID       uint32
	Function string
	File     string // relative to the module root or working directory
	Line     int
}

// Rerun is what a re-run of a recorded program needs.
type Rerun struct {
	Program string   `json:"program"` // the program as given: a Go main package directory or an executable, absolute
	Args    []string `json:"args"`
	Dir     string   `json:"dir"`    // the working directory it ran in
	Binary  string   `json:"binary"` // SHA-256 of the executable that ran (hex): a changed program is not re-run
	// An MPI job: the ranks and the launcher's extra arguments it ran with.
	Ranks   int      `json:"ranks,omitempty"`
	MPIArgs []string `json:"mpi_args,omitempty"`
}

// Status of a whole recording, kept in the header.
type Status string

const (
	StatusRunning  Status = "running" // still being written, or cut short (killed)
	StatusComplete Status = "complete"
	StatusHung     Status = "hung"
	StatusCrashed  Status = "crashed"
)

// CommGroup is a communicator of an MPI trace: its id (Event.Comm) and
// the world ranks of its members, in the communicator's rank order.
type CommGroup struct {
	ID    int   `json:"id"`
	Ranks []int `json:"ranks"`
	// Call is the call that made it ("MPI_Comm_split"), and Site its
	// file:line, when the recording saw it made ("" = not known).
	Call string `json:"call,omitempty"`
	Site string `json:"site,omitempty"`
}

// Unstarted is a persistent request of an MPI trace that its rank made
// (MPI_Send_init, MPI_Recv_init ...) and never started (MPI_Start,
// MPI_Startall): an inactive request sends or receives nothing (MPI-3.1
// sec. 3.9), so the message a peer waits for never leaves. Peer is a
// world rank (AnySource for a receive from any source), Tag may be AnyTag.
type Unstarted struct {
	Rank int    `json:"rank"`
	Call string `json:"call"` // the init call: "MPI_Send_init"
	Op   Op     `json:"op"`   // the request's op: OpIsend ... OpIrecv
	Peer int    `json:"peer"`
	Tag  int    `json:"tag"`
	Comm int    `json:"comm"`
	Site string `json:"site,omitempty"` // file:line of the init call ("": not known)
}

// NamedComms returns the communicators of h.Comms that the findings fs
// name by id, with their members, for the legend under a report
// (verdict.NamedComms).
func (h *Header) NamedComms(fs []verdict.Finding) []verdict.Comm {
	all := make([]verdict.Comm, len(h.Comms))
	for i, g := range h.Comms {
		all[i] = verdict.Comm{ID: g.ID, Ranks: g.Ranks, Made: g.Call}
		if g.Call != "" && g.Site != "" {
			all[i].Made += " at " + g.Site
		}
	}
	return verdict.NamedComms(fs, all)
}

// Header describes a whole recording. It is stored once and rewritten when the
// recording ends (status, end time, counts).
type Header struct {
	FormatVersion int      `json:"format_version"`
	ToolVersion   string   `json:"tool_version"`
	Command       []string `json:"command"`
	WorldSize     int      `json:"ranks"`
	Backend       string   `json:"backend"` // "sim", or the MPI implementation and version
	EagerLimit    int64    `json:"eager_limit"`
	LatencyNS     int64    `json:"latency_ns"`
	BandwidthBps  float64  `json:"bandwidth_bytes_per_s"`
	Seed          uint64   `json:"seed"`
	HashMode      string   `json:"hash"` // full, sample, off
	// BsendOverhead is MPI_BSEND_OVERHEAD, the bytes a buffered message
	// needs on top of its packed size, in MPI traces whose recorder records
	// MPI_Buffer_attach and MPI_Buffer_detach (OpBufferAttach): nonzero
	// says so, and then every rank's buffered sends are checked against
	// its attached space from its start. 0 in older traces: a rank's
	// buffered sends are checked only once it attaches (as the gpu
	// runtime's, whose messages need no overhead).
	BsendOverhead int64 `json:"bsend_overhead,omitempty"`
	// HashAlgo is the function of the payload hashes (HashXXH64,
	// HashXXH3); "" in traces written before it was recorded: HashXXH64.
	// Read it through HashAlgorithm.
	HashAlgo      string `json:"hash_algo,omitempty"`
	StartUnixNano int64  `json:"start_unix_ns"`
	EndUnixNano   int64  `json:"end_unix_ns"`
	Status        Status `json:"status"`
	// Message is a note on how the recording ended, in words ("interrupted
	// by terminated"). Traces written before structured findings (no
	// FindingsVersion) hold the run's findings here as prose.
	Message string `json:"message,omitempty"`
	// Findings are what the recording itself found (a live run's verdict,
	// or a merged job's), as structured records of version FindingsVersion
	// (verdict.Version; 0: none stored, an older trace).
	Findings        []verdict.Finding `json:"findings,omitempty"`
	FindingsVersion int               `json:"findings_version,omitempty"`
	// Rerun says how to run the recorded program again: check re-runs it
	// with one AnySource match forced to judge a message race. Set by
	// p2ptrace record; nil when the trace does not know.
	Rerun *Rerun `json:"rerun,omitempty"`
	// Devices is the device of each rank's tensors ("cpu", "cuda:0"; several
	// comma separated), as the Python recorder saw them; nil when the
	// recorder does not know (gpu and MPI programs). A rank's, not an
	// event's: events have no device field.
	Devices []string `json:"devices,omitempty"`
	// Comms are the communicators the recording saw created, with their
	// members' world ranks (an MPI job's, from the shim); nil when it does
	// not know (gpu programs, older traces). The replay's wait-for graph
	// uses them: a rank stuck in a collective waits for every member that
	// has not entered it, not only the ranks seen using the communicator.
	Comms []CommGroup `json:"comms,omitempty"`
	// Unstarted are the persistent requests an MPI job made and never
	// started, for the candidate of a hang: a receive whose message only
	// such a request would have sent (nil: none, or a trace that does not
	// know).
	Unstarted []Unstarted `json:"unstarted,omitempty"`
	// Events and RankEvents count the events written, set when the recording ends.
	Events     int64   `json:"events"`
	RankEvents []int64 `json:"rank_events,omitempty"`
}
