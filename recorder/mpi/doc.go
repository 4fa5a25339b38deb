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
// Sendrecv_replace, Probe, Iprobe, Barrier, Buffer_attach, Buffer_detach.
// MPI calls made by the MPI library itself inside an intercepted call are not
// recorded (a thread-local depth counter passes them through).
//
// Peers and status sources are world ranks (MPI_Group_translate_ranks).
// Communicator ids agree across ranks without communication: 0 is
// MPI_COMM_WORLD; a communicator made by Comm_dup or Comm_split gets a 31-bit
// id hashed from (parent id, how many communicators this parent made before,
// split color), so every member computes the same id, and handle values never
// matter. A communicator made by a call the shim does not intercept
// (Comm_create, Cart_create...) gets an id hashed from its world ranks.
//
// Requests get small increasing ids (1, 2, ...) per rank, through an
// open-addressing table keyed by the MPI_Request handle; a persistent request
// gets a fresh id at every Start.
//
// Payload hashes are XXH64 (seed 0) | 1, as the Go recorder (so 0 means "not
// hashed"); P2PTRACE_HASH=full|sample|off as for Go programs. Sends are hashed
// when posted and again when their completion is seen (Wait/Test family), so
// a hash that changed is an in-flight mutation; receives are hashed over the
// received bytes at completion. Derived datatypes are hashed through
// MPI_Pack.
//
// Call sites are __builtin_return_address(0) of the wrapper plus the load base
// and path of its module (dladdr); Merge resolves them to file:line with the
// module's DWARF line table (build the program with -g).
//
// At Init the shim installs an error handler on MPI_COMM_WORLD (inherited by
// derived communicators) that records the MPI error text and the call it
// happened in, marks the rank errored and aborts the job, as
// MPI_ERRORS_ARE_FATAL does. MPI_Abort is recorded the same way.
//
// Cost: no system call and no allocation on the path of a small call (the
// clock is the vDSO's; tables grow by doubling). Thread safety: one mutex
// guards the recorder state; it is never held across a PMPI call that can
// block, so MPI_THREAD_MULTIPLE programs are recorded correctly, serialized
// only around the bookkeeping.
//
// # FORMAT
//
// Segment format version 1. A segment is one file per world rank, written by
// that rank only, through a shared mmap of the file (grown with ftruncate in
// doubling chunks, at most 64 MiB at a time, and remapped): a rank killed with
// SIGKILL loses nothing it recorded, and other processes read the live header
// while the job runs. All integers are little endian.
//
// Header, 4096 bytes at offset 0 (updated in place while the rank runs):
//
//	  0 [8]byte magic "P2PTSEG1" (written last at init: zero until the header is valid)
//	  8 u32 version (1)          12 u32 header size (4096)
//	 16 i32 world rank           20 i32 world size          24 i32 pid
//	 28 u32 state (RankState: 1 running, 2 blocked, 3 finalized, 4 aborted, 5 errored)
//	 32 u64 calls intercepted so far
//	 40 u64 used: bytes of committed records after the header
//	 48 i64 start, unix ns       56 i64 start, CLOCK_MONOTONIC ns
//	 64 i64 end, unix ns (finalize, abort or error; 0 before)
//	 72 i64 eager limit of the shared-memory transport (MPI_T cvar
//	        btl_vader_eager_limit), 0 if unknown
//	 80 u32 hash mode (0 full, 1 sample, 2 off)
//	 84 u32 current call (the call in progress, or the last one; codes below)
//	 88 u64 its pc               96 u32 its module id      100 u32 thread level
//	104 i32 MPI error class     108 u32 call of the error or abort
//	112 u64 its pc              120 u32 its module id
//	128 [256]byte MPI library version, first line, NUL terminated
//	384 [512]byte error text (MPI_Error_string, or the MPI_Abort code), NUL terminated
//
// Records follow the header, each a 112-byte base plus a trailer, 8-byte
// aligned. A record is written in place and then published by advancing
// "used", so a reader never sees half a record:
//
//	  0 u16 total length         2 u8 type (1 post, 2 done, 3 module, 4 comm)
//	  3 u8 call code             4 u8 trace.Op (0: decided by the merge)
//	  5 u8 trace.Dtype           6 u8 flag                  7 u8 error
//	  8 u32 seq                 12 u32 module id
//	 16 i32 peer (world rank; -1 any source, -2 MPI_PROC_NULL)
//	 20 i32 tag (-1 any)        24 i32 communicator id     28 i32 index
//	 32 i64 count               40 i64 bytes
//	 48 u64 t0: entry, ns since start (monotonic)
//	 56 u64 t1: return, ns since start (0 if not known)
//	 64 u64 pc                  72 u64 request id          80 u64 hash
//	 88 i32 status source (world rank)   92 i32 status tag  96 i64 status count
//	104 u32 n: trailer entries 108 u32 reserved
//	112 trailer: n u64 (request ids, or the world ranks of a comm record),
//	    or the NUL-terminated path of a module record
//
// Post records are a rank's calls in program order; seq counts them from 0. A
// blocking call writes its post at entry (so a rank that hangs keeps a post
// without a done); a nonblocking one (Isend, Irecv, Start, Iprobe) writes it
// at return, with t1 and the new request id. Done records name the post they
// complete by seq: a blocking call's return, and the completion of a request
// seen inside a Wait/Test family call (written before that call's own done).
// Sendrecv writes two posts (op Sendrecv, then op Recv). Waitsome, Testany
// and Testsome write op 0 and list in their done record's trailer the
// requests that completed. A module record (id, load base in pc, path) comes
// before the first record that uses its id; a comm record (id, parent id in
// peer, size in count, world ranks in the trailer) when a communicator is
// created.
//
// Call codes: 1 MPI_Init, 2 Init_thread, 3 Finalize, 4 Abort, 5 Comm_rank,
// 6 Comm_size, 7 Comm_dup, 8 Comm_split, 9 Comm_free, 10 Send, 11 Ssend,
// 12 Bsend, 13 Rsend, 14 Recv, 15 Isend, 16 Issend, 17 Ibsend, 18 Irsend,
// 19 Irecv, 20 Wait, 21 Waitall, 22 Waitany, 23 Waitsome, 24 Test,
// 25 Testall, 26 Testany, 27 Testsome, 28 Request_free, 29 Send_init,
// 30 Ssend_init, 31 Bsend_init, 32 Rsend_init, 33 Recv_init, 34 Start,
// 35 Startall, 36 Sendrecv, 37 Sendrecv_replace, 38 Probe, 39 Iprobe,
// 40 Barrier, 41 Buffer_attach, 42 Buffer_detach.
package mpi
