// Package mpi records real MPI programs (C, C++, anything linked against an
// MPI library with a PMPI profiling layer) into p2ptrace traces.
//
// Recording has three parts:
//
//  1. The shim, shim/p2ptrace_shim.c (embedded; BuildShim compiles it with
//     mpicc into a cached shared library). Preloaded into every rank
//     (LD_PRELOAD, exported by mpirun -x), it intercepts the MPI calls, forwards
//     them to PMPI and, when P2PTRACE_SEGDIR is set, appends what each call did
//     to the rank's segment file SegmentPath(dir, worldRank).
//  2. The live header of each segment, which ReadLiveState reads while the job
//     runs (a monitor polls it to see which ranks are blocked in which call).
//  3. Merge, which reads every rank's segment once the job ended (normally,
//     aborted, killed or hung) and writes one trace with package
//     recorder/trace, in the ops the replay driver already knows.
//
// # What the shim records
//
// Intercepted: MPI_Init, Init_thread, Finalize, Abort, Comm_rank, Comm_size,
// Comm_dup, Comm_split, Comm_free, Send, Ssend, Bsend, Rsend, Recv, Isend,
// Issend, Ibsend, Irsend, Irecv, Wait, Waitall, Waitany, Waitsome, Test,
// Testall, Testany, Testsome, Request_free, Send_init, Ssend_init,
// Bsend_init, Rsend_init, Recv_init, Start, Startall, Sendrecv,
// Sendrecv_replace, Probe, Iprobe, Barrier, Buffer_attach, Buffer_detach,
// Mprobe, Improbe, Mrecv, Imrecv, and the blocking collectives Bcast,
// Reduce, Allreduce, Gather, Gatherv, Scatter, Scatterv, Allgather,
// Allgatherv, Alltoall, Alltoallv, Reduce_scatter, Reduce_scatter_block,
// Scan, Exscan, their nonblocking forms Ibarrier ... Iexscan, and
// Request_get_status (a poll: recorded as a fruitless Test when it finds its
// request pending, not at all when complete). A nonblocking collective's
// send side is hashed at the call and at completion (an Isend's rule: the
// two hashes of its post and done records differ when the program wrote it,
// an in-flight-mutation), its receive side watched as a pending Irecv's
// buffer (a write record); the v variants' buffers are neither.
// Marked, not recorded (untraced_enter): the rank is blocked in the call at
// its line, so a job that hangs there is called hung and the report names
// the call, but the trace holds no op for it: the blocking neighbourhood
// collectives, Alltoallw, the blocking collectives of intercommunicators,
// and the collective calls that make communicators and windows
// (Comm_create, Comm_split_type, Comm_create_group, Intercomm_create,
// Intercomm_merge, Cart_create, Cart_sub, Graph_create, Dist_graph_create,
// Dist_graph_create_adjacent, Win_create, Win_allocate, Win_fence,
// Win_free, Win_allocate_shared, Win_create_dynamic), and one-sided
// communication (MPI-3.1 chapter 11: Put, Get, Accumulate,
// Get_accumulate, Fetch_and_op, Compare_and_swap and their request forms,
// Win_lock, Win_unlock, their _all forms, the Win_flush calls, Win_sync,
// Win_post, Win_start, Win_complete, Win_wait). A comm record names the call that made the communicator and
// its pc when the shim saw it made (Comm_dup, Comm_split and the marked
// calls), for the reports that name the communicator.
// MPI calls made by the MPI library itself inside an intercepted call are not
// recorded (a thread-local depth counter passes them through). MPI_Free_mem
// is passed through, noted only as the call the library's free() is made
// in, so that a window's memory given back there is named at the program's
// call (released buffers: the shim's "buffers released while in use").
//
// Besides the ops, the merge judges what the trace alone cannot: rules
// over the records of every rank (rules.go, rma.go), among them the
// one-sided accesses that no synchronization orders (over syncOrder's
// vector clocks of the run's messages and collective calls), whatever the
// run's timing. Ready sends are judged from the trace, as every door
// judges them: by replays that hold each one's receive back (package
// replay's HeldPost; p2ptrace record runs them after the merge).
//
// Peers and status sources are world ranks (MPI_Group_translate_ranks). On
// an intercommunicator (MPI_Comm_test_inter; MPI-3.1 sec. 6.6) dest, source,
// MPI_SOURCE and a re-run's pinned source are ranks of the remote group
// (MPI_Comm_remote_group, bounded by MPI_Comm_remote_size, not
// MPI_Comm_size, which is the local group's); its collectives, MPI_Barrier
// included, are not recorded, only marked (their roots MPI_ROOT and
// MPI_PROC_NULL and two groups are not modelled).
// Communicator ids agree across ranks without communication: 0 is
// MPI_COMM_WORLD; a communicator made by Comm_dup or Comm_split gets a 31-bit
// id hashed from (parent id, how many communicators this parent made before,
// split color), so every member computes the same id, and handle values never
// matter. A communicator made by another call (Comm_create, Cart_create,
// Intercomm_merge...) gets an id hashed from its
// world ranks; an intercommunicator (Intercomm_create) one hashed from both
// groups' world ranks, the group holding the lower world rank first, so that
// both sides agree (tagged apart from the intracommunicators' ids). A comm
// record lists the local group.
//
// Requests get small increasing ids (1, 2, ...) per rank, through an
// open-addressing table keyed by the MPI_Request handle; a persistent request
// gets a fresh id at every Start. Handles are not unique: Open MPI hands out
// one shared, already complete request for every Isend it completed inline,
// so the table keeps duplicates and tells them apart by the address of the
// variable the handle was written to (r[i] of Isend(..., &r[i]) and
// Waitall(n, r)), falling back to the oldest.
//
// Payload hashes are XXH64 (seed 0) | 1 (so 0 means "not hashed"; the
// trace's hash_algo stays unset, which reads as xxh64; the Python recorder's
// segments hash with BLAKE2b and their merge sets hash_algo blake2b-64); P2PTRACE_HASH=full|sample|off as for Go programs. Sends are hashed
// when posted and again when their completion is seen (Wait/Test family), so
// a hash that changed is an in-flight mutation; receives are hashed over the
// received bytes at completion. Derived datatypes are hashed through
// MPI_Pack.
//
// Call sites are __builtin_return_address(0) of the wrapper plus the load base
// and path of its module (dladdr); Merge resolves them to file:line with the
// module's DWARF line table (build the program with -g). A call made from
// mpi4py's extension module (mpi4py/MPI.*.so) is named by the Python line
// that called it: the shim asks the interpreter (PyGILState_Ensure,
// PyEval_GetFrame, through dlsym) for the innermost frame outside mpi4py's
// package, and records "FILE.py:LINE" as a module of its own with load base 0,
// which Merge takes as the site.
//
// At Init the shim installs an error handler on MPI_COMM_WORLD (inherited by
// derived communicators), and on each window it sees made (a window's
// default is MPI_ERRORS_ARE_FATAL, not the world's handler), that records the MPI error text and the call it
// happened in, marks the rank errored and aborts the job, as
// MPI_ERRORS_ARE_FATAL does. MPI_Abort is recorded the same way. An error
// Open MPI does not detect, MPI_Start or MPI_Startall of a persistent
// request that is active (MPI-3.1 sec. 3.9), the shim raises itself
// (MPI_ERR_REQUEST on the request's communicator, the call not made). The shim's
// own look-ups (type sizes, counts, envelopes) run "quiet": an error they
// raise is ignored, so that the program's call reports it under its own
// name; an error outside the recorded calls is placed by unwinding the
// stack past the MPI library. Derived types a request uses are duplicated
// until it completes (the program may free them meanwhile).
//
// Cost: no system call and no allocation on the path of a small call (the
// clock is the vDSO's; tables grow by doubling; the segment grows in big
// chunks, prefaulted in bulk). What remains is the lock, three clock reads
// and about 30 bytes of fresh memory per call: BenchmarkShimOverhead measured
// about 0.3 us per intercepted call on a 2-core VM, where writing fresh
// memory is itself slow (see BenchmarkShimOverhead and
// BenchmarkShimBandwidth1MiB). Thread safety: one mutex
// guards the recorder state; it is never held across a PMPI call that can
// block, so MPI_THREAD_MULTIPLE programs are recorded correctly, serialized
// only around the bookkeeping.
//
// # Merge
//
// Merge maps the MPI calls to the trace ops the replay driver knows, so a
// merged trace replays without driver changes wherever possible: blocking and
// nonblocking sends and receives to their ops; Sendrecv and
// Sendrecv_replace to OpSendrecv + OpRecv (as package gpu); a persistent
// Start to OpIsend/OpIssend/OpIbsend/OpIrsend/OpIrecv with a fresh Req
// (Send_init and Recv_init alone are not ops); Wait, Waitall, Test, Testall
// to their ops; Waitany to OpWaitany over its candidates with Index naming
// the one that completed (the replay waits for that one), and Waitsome to
// OpWaitall over the requests that completed, so the replay follows the
// recorded control flow (a rank that hung inside Waitsome keeps OpWaitany
// over every candidate); Testany and Testsome to
// OpTest (one request) or OpTestall, over the completed requests when the
// call found some (Flag true), else over the candidates (Flag false);
// Request_free of an active request to OpFree (of an inactive persistent
// one: nothing); Barrier to OpBarrier with Comm and Count = the size of the
// communicator; the other collectives to their ops (OpBcast..OpExscan)
// with Comm, Count = the size of the communicator, Peer = the root's world
// rank (-1 without a root), Tag = the caller's rank in the communicator,
// Dtype and Bytes = the caller's side of the type signature: count x
// datatype of a Bcast, Reduce, Allreduce, Scan, Exscan, the recvcount of a
// Reduce_scatter_block, Allgather and Alltoall, a Gather root's recvcount
// and the others' sendcount, a Scatter root's sendcount and the others'
// recvcount (equal on every member, as the standard requires); the v
// variants' own contribution (Alltoallv: all it receives; not compared);
// Dtype recorded as a message op's (a derived type of one basic type as
// that type), and a reduction's op (Reduce, Allreduce, Reduce_scatter(_block),
// Scan, Exscan) in Stream as a trace.ReduceOp (the shim writes it in the
// post's index: a predefined op's code, "user" for MPI_Op_create's; absent
// in older segments: not recorded);
// the nonblocking collectives (Ibarrier, Ibcast ... Iexscan; call codes
// 84..99) to OpIbarrier..OpIexscan with their blocking form's fields (an
// Ibarrier's as a Barrier's) and Req, the request they returned, which the
// Wait/Test family completes as an Isend's (posted after the PMPI call,
// as a nonblocking send is);
// Probe/Iprobe to OpProbe/OpIprobe; Finalize to OpFinalize.
// A matched probe (Mprobe, an Improbe that found a message; MPI 3.1 sec.
// 3.8.2) to OpProbe/OpIprobe, and the Mrecv/Imrecv of its message to a
// blocking OpRecv placed right after the probe, from the status's source and
// tag, with the Mrecv's buffer and what it received (mprobe.go): no call of
// the rank comes between the two, so no other receive can take the probed
// message; an Imrecv's request is complete when posted (its Waits and Tests
// leave it out, as a request to MPI_PROC_NULL).
// Cancel of an active request to OpCancel over it; whether the cancel took
// (MPI_Test_cancelled of the completion's status) is the Flag of the
// cancelled op's Done event, whose status then names no source.
// Buffer_attach to OpBufferAttach with Count and Bytes = the size attached,
// Buffer_detach to OpBufferDetach (call codes 41 and 42, counted only
// before); the header's MPI_BSEND_OVERHEAD (the segment header's former
// padding at 124) becomes trace.Header.BsendOverhead, which says so.
// Calls with MPI_PROC_NULL, and waits on nothing else, are left out. A gap
// over 1 us between a rank's calls becomes an OpCompute of that duration.
//
// Merge also reports, in the trace's message, rules a trace cannot show
// (rules.go): buffer-overlap (pending ops of a rank whose dense buffers
// share bytes, one a receive; a Sendrecv's two buffers), request-leak (a
// persistent request not freed by MPI_Finalize), resource-leak (a
// communicator, window, datatype, group or reduction op the program made
// and did not free before MPI_Finalize), buffer-overrun and
// host-type-mismatch (a call's buffer that runs past the variable or heap
// block it points into, or whose predefined datatype does not name the
// variable's C type: the shim records each call's frame pointer and the
// sizes of the heap blocks malloc makes, and objects.go reads the
// program's variables from its DWARF); and a rank without a segment merges
// as a rank without calls (the trace is crashed).
//
// MatchRank/MatchSeq are filled offline: a receive with actual source s and
// tag t on communicator c took the earliest not yet taken send of s to this
// rank on c with tag t, receives taken in post order; the send gets its
// receiver. Virtual times are the recorded wall times (ns since the run's
// start, the earliest rank's MPI_Init).
//
// # FORMAT
//
// Segment format version 3, written by the shim and by the Python recorder
// (package recorder/python); Merge also reads version 2 (an older shim:
// version 3 without its additions). A segment is one file per world rank, written by
// that rank only, through a shared mmap of the file (grown with ftruncate,
// doubling up to 64 MiB at a time, remapped, and prefaulted in bulk with
// MADV_POPULATE_WRITE): a rank killed with SIGKILL loses nothing it
// recorded, and other processes read the live header while the job runs.
// All integers are little endian.
//
// Header, 4096 bytes at offset 0 (updated in place while the rank runs):
//
//	  0 [8]byte magic "P2PTSEG1" (written once rank, size, pid and state are:
//	        zero before; Merge takes such a segment as a rank that ended inside
//	        MPI_Init, ReadLiveState as one not created yet)
//	  8 u32 version (3)          12 u32 header size (4096)
//	 16 i32 world rank           20 i32 world size          24 i32 pid
//	 28 u32 state (RankState: 1 running, 2 blocked, 3 finalized, 4 aborted, 5 errored)
//	 32 u64 calls intercepted so far
//	 40 u64 used: bytes of committed records after the header
//	 48 i64 start, unix ns       56 i64 start, CLOCK_MONOTONIC ns
//	 64 i64 end, unix ns (finalize, abort or error; 0 before)
//	 72 i64 eager limit of the shared-memory transport: at init from
//	        OMPI_MCA_btl_vader_eager_limit (what mpirun --mca passes), else
//	        read at MPI_Finalize through MPI_T (cvar btl_vader_eager_limit;
//	        MPI_T_init_thread costs Open MPI ~0.2 s, too much for MPI_Init);
//	        0 if unknown (Merge then takes 4096 for Open MPI)
//	 80 u32 hash mode (0 full, 1 sample, 2 off)
//	 84 u32 current call (the call in progress, or the last one; codes below)
//	 88 u64 its pc (absolute)    96 u32 its module id      100 u32 thread level
//	104 i32 MPI error class     108 u32 call of the error or abort
//	112 u64 its pc              120 u32 its module id
//	128 [256]byte MPI library version, first line, NUL terminated
//	    (Python: "torch.distributed BACKEND (torch VERSION)")
//	384 [512]byte error text (MPI_Error_string, or the MPI_Abort code), NUL terminated
//	896 [64]byte the MPI function that failed when it is not a call the shim
//	        records (error call 0; found by unwinding the stack to the
//	        outermost MPI library frame), NUL terminated; its pc (into the
//	        program) at 112
//	960 u64 poll_from           968 u64 poll_to: calls poll_from..poll_to
//	        were polls that found nothing (MPI_Test*, MPI_Iprobe answering
//	        no); poll_to is 0 after any other outcome (the hang monitor
//	        counts such a rank as blocked)
//	976 u32 site id of the current call (0: none; Python programs, pc 0)
//	980 u32 site id of the error (an uncaught Python exception)
//	984 [32]byte the devices of the rank's tensors, comma separated in
//	        first-use order ("cpu", "cpu,cuda:0"), NUL terminated (Python
//	        recorder; zero from the shim); the merge makes it the trace
//	        header's Devices
//	1016 u32 nonzero: the failed call (error call, at 108) was refused
//	        for a bad argument (an error class of count, type, tag,
//	        communicator, rank, request, root, group, op or argument:
//	        it took no effect); the merge leaves its post out of the trace
//
// Records follow the header back to back. A record is encoded in place and
// then published by advancing "used", so a reader never sees half of one:
//
//	u32  length of the whole record (low 24 bits) | type << 24
//	     (type 1 post, 2 done, 3 module, 4 comm, 5 site, 6 write, 7 rma: version 3)
//	u8   call code
//	uvarint mask: bit i set when field i is present (nonzero)
//	the present fields, in bit order
//
// Fields (zz: zigzag-mapped signed value, then uvarint; u8: one byte):
//
//	 0 op u8 (trace.Op; absent: decided by the merge)
//	 1 dtype u8 (trace.Dtype)    2 flag u8    3 error u8
//	 4 seq uvarint (done records: the post they complete; posts are
//	   numbered 0, 1, 2... in record order and never carry it)
//	 5 module uvarint            6 peer zz (world rank; -1 any source,
//	   -2 MPI_PROC_NULL)          7 tag zz (-1 any)        8 comm zz
//	 9 index zz                 10 count zz               11 bytes zz
//	12 t0 zz: entry time (ns since start, monotonic) minus the previous
//	   record's last time (t1 if it had one, else t0)
//	13 t1 zz: return time minus t0 when t0 is present, else minus that
//	   previous time
//	14 pc uvarint: the return address minus the load base of the module
//	   (module records: the load base itself)
//	15 req uvarint (a request id)   16 hash: 8 bytes
//	17 status source zz (world rank)  18 status tag zz  19 status count zz
//	20 trailer: uvarint n, then n zz deltas (each from the previous value,
//	   the first from 0): request ids, or the world ranks of a comm record
//	21 path: uvarint n, then n bytes (module records; site records: the
//	   file, a NUL, the function)
//	22 buffer address uvarint, 23 its length uvarint: the bytes a message
//	   op reads or writes, present when they are one range without holes
//	   (the merge finds overlapping buffers of pending ops with them)
//	24 site uvarint: the post's site id, from a site record (Python)
//	25 signature: uvarint n, then n runs (u8 trace.Dtype, uvarint count):
//	   the type signature of one element of a mixed derived datatype (the
//	   post's dtype is opaque), adjacent runs of one type merged, at most 64
//	   (the shim's; the merge compares matched pairs: signatureFindings)
//	26 frame uvarint: the frame pointer of the function that made the call
//	   (the shim's, on a post with a buffer: the merge finds the variable a
//	   buffer points into from it, overrunFindings)
//	27 a collective's receive buffer: address uvarint, length uvarint, as
//	   22 and 23, which then hold its send buffer (the shim's)
//	28 heap blocks: uvarint, uvarint: the sizes of the heap blocks that the
//	   buffers of 22 and 27 start, 0 for one the shim does not know (it
//	   notes the blocks malloc, calloc and realloc make)
//	29 C types: uvarint, uvarint: what the datatypes of the buffers of 22
//	   and 27 stand for in C, class << 8 | size (class 1 signed, 2
//	   unsigned, 3 floating, 4 a 1-byte character or integer, 5 any:
//	   MPI_BYTE, MPI_PACKED; 0: not compared)
//
// A post record is a rank's call in program order. A blocking call writes
// its post at entry (so a rank that hangs keeps a post without a done); a
// nonblocking one (Isend, Irecv, Start, Iprobe) writes it at return, with t1
// and the new request id. Done records name the post they complete: a
// blocking call's return, and the completion of a request seen inside a
// Wait/Test family call (written before that call's own done). Sendrecv
// writes two posts (op Sendrecv, then op Recv). Waitsome, Testany and
// Testsome write no op and list in their done record's trailer the requests
// that completed. A module record (id, load base, path) comes before the
// first record that uses its id; a comm record (id, parent id in peer, size
// in count, world ranks in the trailer) when a communicator is created;
// the merge lists them in the trace header (Header.Comms), leaving out an
// id whose records disagree (an intercommunicator's two sides).
// A persistent init (Send_init...) writes a post with its op, envelope and
// its persistent id in req, and no done: no trace op (Start is); the
// merge lists the inits no Start or Startall of the rank started (same
// op, envelope and buffer) in the trace header (Header.Unstarted). A
// Request_free of a persistent request writes a post with the persistent id
// in req: op Free with the current request in the trailer if it was active
// (its done's flag set: freed while active, whatever a replay's timing;
// a finding for a receive, not a send: MPI-3.1 sec. 3.7.3),
// else no op. Datatypes: a derived type whose signature is one basic type
// repeated is recorded as that type, count in basic elements; a mixed one
// as opaque with its signature (field 25).
// An Iprobe that found nothing takes about 32 bytes (post and done). A
// site record (id in module, line in count, path) comes before the first
// post that names its id: Python programs have no pc.
// A write record says that the buffer of a pending receive (its post in seq,
// its request id in req) changed between the return of one MPI call of the
// rank and the entry of the next: the program wrote it. Its call, pc and
// module are the call that saw the change (the rule: recvWriteFindings;
// how the shim watches: the shim's "receive buffers written while their
// receive is pending").
// An rma record is a window made (call Win_create, Win_allocate,
// Win_allocate_shared or Win_create_dynamic: the window's id in comm, the
// same on every member, its communicator's id in index, this rank's
// disp_unit in count, its size in bytes, and in addr and span its memory on
// this rank when the shim knows it: Win_create's base, Win_allocate's) or a
// one-sided access (call Put,
// Get, Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap or a
// request form: the window's id in comm, the target's world rank in peer,
// the target displacement in the target's disp_units in count, the bytes
// it touches from there in scount (the target type's true lower bound)
// and bytes, an accumulate's reduction op in tag (255: compare-and-swap),
// the target type's basic type in dtype, an accumulate's element type in
// stag (1 + the index of the one predefined datatype the target type is
// made of in the shim's table, the same in every process, | its size << 8;
// 0: mixed, not known, or not an accumulate), err set when the target type has
// holes in that span (not compared), the number of Win_fence calls the
// rank made on the window before it in index, flag set when made in a
// lock or start epoch, and then the epoch in op (1 exclusive lock, 2
// shared lock or lock_all, 3 start) and the epoch's ordinal in source;
// req: the access's ordinal, from 1), a lock or start epoch's end (op 4:
// call Win_unlock, Win_unlock_all or Win_complete, the epoch's ordinal in
// req, t0 when it returned), an origin buffer written before its access
// completed (op 0, call: the synchronization call that completed it, or
// the wait or test that completed a request form's request, with its pc;
// req: the access's ordinal), or a Get's origin buffer the program
// wrote while the Get was pending (op 5, call: the call at whose entry the
// watch saw it; req: the access's ordinal; flag set: the result buffer of
// an accumulate that fetches, written while it was pending), or a lock
// epoch opened inside a fence epoch (op 6, call: the Win_lock or
// Win_lock_all, with its pc; index: the fences on the window before it;
// peer: the world rank it locked, -1 for all; written at the fence that
// closed that epoch), or an access whose buffer
// the library writes overlapping the one of a pending access of the rank
// (op 7, call: the new access, with its pc; req: its ordinal; source: the
// pending one's; bytes: the bytes in common), a flush (op 8), a post's or
// start's group (op 9), a window's memory released while the window
// lived (op 10), or the completion of a fetching access's request (op 11,
// Rget or Rget_accumulate: call, pc: the wait or test; req: the access's
// ordinal; t0: when it returned). The rules: rmaFindings,
// concurrentEpochFindings (shared lock epochs ordered by syncOrder: vector
// clocks over matched messages and collective calls), ownWindowAccesses,
// originFindings, mixedEpochFindings.
//
// Call codes: 1 MPI_Init, 2 Init_thread, 3 Finalize, 4 Abort, 5 Comm_rank,
// 6 Comm_size, 7 Comm_dup, 8 Comm_split, 9 Comm_free, 10 Send, 11 Ssend,
// 12 Bsend, 13 Rsend, 14 Recv, 15 Isend, 16 Issend, 17 Ibsend, 18 Irsend,
// 19 Irecv, 20 Wait, 21 Waitall, 22 Waitany, 23 Waitsome, 24 Test,
// 25 Testall, 26 Testany, 27 Testsome, 28 Request_free, 29 Send_init,
// 30 Ssend_init, 31 Bsend_init, 32 Rsend_init, 33 Recv_init, 34 Start,
// 35 Startall, 36 Sendrecv, 37 Sendrecv_replace, 38 Probe, 39 Iprobe,
// 40 Barrier, 41 Buffer_attach, 42 Buffer_detach. The Python recorder's
// (torch.distributed): 43 init_process_group, 44 destroy_process_group,
// 45 new_group, 46 send, 47 recv, 48 isend, 49 irecv, 50 batch_isend_irecv,
// 51 Work.wait, 52 Work.is_completed, 53 barrier, 54 uncaught exception,
// 55 exit, 56 all_reduce, 57 broadcast, 58 all_gather, 59 reduce,
// 60 reduce_scatter, 61 all_to_all, 62 gather, 63 scatter. MPI again (added
// after the Python recorder's, so older segments read as before): 64 Mprobe,
// 65 Improbe, 66 Mrecv, 67 Imrecv. The shim writes an Mprobe's post and done
// as a Probe's, an Improbe's as an Iprobe's, and an Mrecv's or Imrecv's post
// as a receive's (peer any source, or MPI_PROC_NULL for
// MPI_MESSAGE_NO_PROC; tag any) with index = the seq of its probe + 1 (0:
// MPI_MESSAGE_NO_PROC). 68 Cancel. 69 Bcast, 70 Reduce, 71 Allreduce,
// 72 Gather, 73 Gatherv, 74 Scatter, 75 Scatterv, 76 Allgather,
// 77 Allgatherv, 78 Alltoall, 79 Alltoallv, 80 Reduce_scatter,
// 81 Reduce_scatter_block, 82 Scan, 83 Exscan: written as Barrier's are,
// with the root in peer, the caller's rank in the communicator in tag,
// the communicator's size in count, and a reduction's op (a
// trace.ReduceOp code) in index. 84..99 their nonblocking forms (Ibarrier
// ... Iexscan), 100..103 the Python recorder's single-tensor collectives
// and monitored barrier, 104..123 the marked calls above (Neighbor_allgather
// ... Win_free, in callNames' order), 124 Request_get_status, 125..149 the
// marked window and one-sided calls (Win_allocate_shared ... Win_wait),
// 150..175 the marked calls that make and free datatypes, groups and
// reduction ops (Type_contiguous ... Op_free, in callNames' order),
// 176 Comm_disconnect.
//
// A free record (type 8) is the program's call that freed a communicator,
// a window, a datatype, a group or a reduction op: call (Comm_free or
// Comm_disconnect, Win_free, Type_free, Group_free or Op_free: the kind), comm (the
// object's id: a communicator's or a window's, as their making records
// carry it, or an obj record's), pc. An obj record (type 9) is a datatype,
// group or reduction op the program made: call, comm (its id, counting
// from 1 on the rank), tag (1 datatype, 2 group, 3 reduction op), pc. The
// rule: resourceLeaks.
package mpi
