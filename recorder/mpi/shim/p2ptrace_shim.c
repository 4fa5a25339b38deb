/*
 * p2ptrace_shim.c: LD_PRELOAD interposition library over PMPI that records the
 * point-to-point calls of one MPI rank into a segment file (see the FORMAT
 * section of package github.com/p2ptrace/p2ptrace/recorder/mpi).
 *
 * Built by `p2ptrace mpi build-shim` (recorder/mpi.BuildShim):
 *   mpicc -shared -fPIC -O2 -o p2ptrace_shim.so p2ptrace_shim.c -ldl -lpthread
 *
 * Without P2PTRACE_SEGDIR in the environment every wrapper only forwards to PMPI.
 *
 * Thread safety: one recursive mutex guards all recorder state (segment
 * mapping, request and communicator tables, counters). It is never held
 * across a PMPI call that can block. Nested calls (an MPI function that the
 * library implements through another intercepted one) are passed through by
 * a thread-local depth counter.
 *
 * Hot path: no syscalls (clock_gettime is the vDSO), no malloc (tables grow
 * by doubling; wait-family scratch arrays live on the stack up to 64 entries).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* ---- format constants: TestShimConstants (recorder/mpi) fails when they differ from the Go side ---- */
#define SEG_MAGIC "P2PTSEG1"
#define SEG_VERSION 3
#define SEG_HDR 4096
/* offset of err_rejected in the header (segErrRejectedOff) */
#define SEG_ERR_REJECTED 1016

enum { ST_RUNNING = 1, ST_BLOCKED, ST_FINALIZED, ST_ABORTED, ST_ERRORED, ST_SIGNALED, ST_EXITED };
enum { R_POST = 1, R_DONE = 2, R_MODULE = 3, R_COMM = 4, R_WRITE = 6, R_RMA = 7, R_FREE = 8, R_OBJ = 9 };
/* R_FREE: the program freed a communicator, a window, a datatype, a group
 * or a reduction op it made (call = the free call's code, comm = the
 * object's id, pc = the call's); R_OBJ: the program made a datatype, a
 * group or a reduction op (call = the call that made it, comm = its id,
 * counting from 1 on the rank, pc). With the records of their making (a
 * communicator's R_COMM, a window's R_RMA), the merge knows which were
 * never freed before MPI_Finalize (MPI-3.1 sec. 8.7: MPI_Finalize does not
 * free objects made by MPI calls). */
/* The epoch of an access, in its record's op: a fence epoch (or none), an
 * exclusive or a shared lock epoch (MPI_Win_lock, MPI_Win_lock_all), an
 * access epoch of MPI_Win_start (source = the epoch's ordinal on the rank,
 * but for a fence epoch); RMA_EPOCH_END is the record of such an epoch's
 * end (MPI_Win_unlock, MPI_Win_unlock_all or MPI_Win_complete returned:
 * req = the epoch's ordinal, t0 = when); RMA_WRITTEN is the record of a
 * Get's origin buffer the program wrote before the access completed (req =
 * the access's ordinal; call, pc = the call that saw it); RMA_MIXED is the
 * record of a lock epoch opened inside a fence epoch (call, pc = the
 * MPI_Win_lock or MPI_Win_lock_all; index = the fences on the window
 * before it; peer = the world rank it locked, -1 for all; written at the
 * fence that closes that fence epoch: see win_fenced); RMA_OVERLAP is the record of an access whose origin or
 * result buffer, which the library writes, overlaps the one of a pending
 * access that writes its too (call, pc = the new access; req = its
 * ordinal; source = the pending one's; bytes = the bytes in common: see
 * pend_overlap); RMA_FLUSH is the record of an MPI_Win_flush or
 * MPI_Win_flush_all that returned (peer = the target's world rank, -1 for
 * all; req = the rank's last access ordinal then: its accesses up to it
 * to those targets are complete at the target; t0 = when: see
 * rma_flushed); RMA_GROUP is the record of an MPI_Win_post or
 * MPI_Win_start (call) that succeeded: the trailer holds the world ranks
 * of its group, req a start's epoch ordinal (see win_group); RMA_RELEASED is
 * the record of a window's memory the program released while the window
 * lived (comm = the window's id; see "buffers released while in use");
 * RMA_REQ_DONE is the record of an MPI_Rget or MPI_Rget_accumulate whose
 * request a wait or test completed (call, pc = the wait or test; req = the
 * access's ordinal; t0 = when: see rma_reqs_done). */
enum { RMA_EPOCH_FENCE = 0, RMA_EPOCH_EXCL, RMA_EPOCH_SHARED, RMA_EPOCH_START, RMA_EPOCH_END, RMA_WRITTEN, RMA_MIXED, RMA_OVERLAP, RMA_FLUSH, RMA_GROUP, RMA_RELEASED, RMA_REQ_DONE };
enum { HASH_FULL = 0, HASH_SAMPLE = 1, HASH_OFF = 2 };

/* trace.Op values */
enum {
    OP_SEND = 1, OP_SSEND, OP_BSEND, OP_RSEND, OP_RECV, OP_ISEND, OP_ISSEND, OP_IBSEND, OP_IRSEND,
    OP_IRECV, OP_WAIT, OP_WAITALL, OP_WAITANY, OP_TEST, OP_TESTALL, OP_FREE, OP_SENDRECV,
    OP_FINALIZE = 24, OP_BARRIER = 25, OP_PROBE = 26, OP_IPROBE = 27, OP_CANCEL = 28,
    OP_BUFFER_ATTACH = 29, OP_BUFFER_DETACH = 30,
    OP_BCAST = 31, OP_REDUCE, OP_ALLREDUCE, OP_GATHER, OP_GATHERV, OP_SCATTER, OP_SCATTERV, OP_ALLGATHER,
    OP_ALLGATHERV, OP_ALLTOALL, OP_ALLTOALLV, OP_REDUCE_SCATTER, OP_REDUCE_SCATTER_BLOCK, OP_SCAN, OP_EXSCAN,
    OP_IBARRIER = 46, OP_IBCAST, OP_IREDUCE, OP_IALLREDUCE, OP_IGATHER, OP_IGATHERV, OP_ISCATTER, OP_ISCATTERV,
    OP_IALLGATHER, OP_IALLGATHERV, OP_IALLTOALL, OP_IALLTOALLV, OP_IREDUCE_SCATTER, OP_IREDUCE_SCATTER_BLOCK,
    OP_ISCAN, OP_IEXSCAN
};
/* trace.Dtype values */
enum { DT_NONE = 0, DT_U8, DT_I32, DT_I64, DT_F32, DT_F64, DT_OPAQUE };
/* trace.ReduceOp values: the op of a reduction collective, in its post's index */
enum {
    RED_NONE = 0, RED_MAX, RED_MIN, RED_SUM, RED_PROD, RED_LAND, RED_BAND, RED_LOR, RED_BOR, RED_LXOR,
    RED_BXOR, RED_MAXLOC, RED_MINLOC, RED_REPLACE, RED_NO_OP, RED_USER
};

/* call codes: callNames in segment.go (checked by TestShimConstants); 43..63
 * are the Python recorder's (callTorchInit..callTorchScatter), the matched
 * probes follow them, then MPI_Cancel and the collectives; 100..103 are the
 * Python recorder's again; from 104 the blocking calls the shim marks (the
 * rank is in MPI, blocked) but does not record (untraced); from 125 the
 * one-sided calls; from 150 the calls that make and free datatypes, groups
 * and reduction ops (marked too; resource leaks: obj_made, obj_freed) */
enum {
    C_NONE, C_INIT, C_INIT_THREAD, C_FINALIZE, C_ABORT, C_COMM_RANK, C_COMM_SIZE, C_COMM_DUP,
    C_COMM_SPLIT, C_COMM_FREE, C_SEND, C_SSEND, C_BSEND, C_RSEND, C_RECV, C_ISEND, C_ISSEND,
    C_IBSEND, C_IRSEND, C_IRECV, C_WAIT, C_WAITALL, C_WAITANY, C_WAITSOME, C_TEST, C_TESTALL,
    C_TESTANY, C_TESTSOME, C_REQUEST_FREE, C_SEND_INIT, C_SSEND_INIT, C_BSEND_INIT, C_RSEND_INIT,
    C_RECV_INIT, C_START, C_STARTALL, C_SENDRECV, C_SENDRECV_REPLACE, C_PROBE, C_IPROBE,
    C_BARRIER, C_BUFFER_ATTACH, C_BUFFER_DETACH,
    C_MPROBE = 64, C_IMPROBE, C_MRECV, C_IMRECV, C_CANCEL,
    C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV, C_ALLGATHER, C_ALLGATHERV,
    C_ALLTOALL, C_ALLTOALLV, C_REDUCE_SCATTER, C_REDUCE_SCATTER_BLOCK, C_SCAN, C_EXSCAN,
    C_IBARRIER, C_IBCAST, C_IREDUCE, C_IALLREDUCE, C_IGATHER, C_IGATHERV, C_ISCATTER, C_ISCATTERV, C_IALLGATHER,
    C_IALLGATHERV, C_IALLTOALL, C_IALLTOALLV, C_IREDUCE_SCATTER, C_IREDUCE_SCATTER_BLOCK, C_ISCAN, C_IEXSCAN,
    C_NEIGHBOR_ALLGATHER = 104, C_NEIGHBOR_ALLGATHERV, C_NEIGHBOR_ALLTOALL, C_NEIGHBOR_ALLTOALLV,
    C_NEIGHBOR_ALLTOALLW, C_ALLTOALLW, C_COMM_CREATE, C_COMM_SPLIT_TYPE, C_COMM_CREATE_GROUP,
    C_INTERCOMM_CREATE, C_INTERCOMM_MERGE, C_CART_CREATE, C_CART_SUB, C_GRAPH_CREATE,
    C_DIST_GRAPH_CREATE, C_DIST_GRAPH_CREATE_ADJACENT, C_WIN_CREATE, C_WIN_ALLOCATE, C_WIN_FENCE, C_WIN_FREE,
    C_REQUEST_GET_STATUS,
    C_WIN_ALLOCATE_SHARED, C_WIN_CREATE_DYNAMIC, C_PUT, C_GET, C_ACCUMULATE, C_GET_ACCUMULATE, C_FETCH_AND_OP,
    C_COMPARE_AND_SWAP, C_RPUT, C_RGET, C_RACCUMULATE, C_RGET_ACCUMULATE, C_WIN_LOCK, C_WIN_UNLOCK, C_WIN_LOCK_ALL,
    C_WIN_UNLOCK_ALL, C_WIN_FLUSH, C_WIN_FLUSH_ALL, C_WIN_FLUSH_LOCAL, C_WIN_FLUSH_LOCAL_ALL, C_WIN_SYNC, C_WIN_POST,
    C_WIN_START, C_WIN_COMPLETE, C_WIN_WAIT,
    C_TYPE_CONTIGUOUS = 150, C_TYPE_VECTOR, C_TYPE_CREATE_HVECTOR, C_TYPE_INDEXED, C_TYPE_CREATE_HINDEXED, C_TYPE_CREATE_INDEXED_BLOCK,
    C_TYPE_CREATE_HINDEXED_BLOCK, C_TYPE_CREATE_STRUCT, C_TYPE_CREATE_SUBARRAY, C_TYPE_CREATE_DARRAY, C_TYPE_CREATE_RESIZED, C_TYPE_DUP, C_TYPE_FREE,
    C_COMM_GROUP, C_COMM_REMOTE_GROUP, C_GROUP_INCL, C_GROUP_EXCL, C_GROUP_RANGE_INCL, C_GROUP_RANGE_EXCL, C_GROUP_UNION,
    C_GROUP_INTERSECTION, C_GROUP_DIFFERENCE, C_WIN_GET_GROUP, C_GROUP_FREE, C_OP_CREATE, C_OP_FREE, C_COMM_DISCONNECT
};
static const char *call_names[] = {
    "", "MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Abort", "MPI_Comm_rank", "MPI_Comm_size",
    "MPI_Comm_dup", "MPI_Comm_split", "MPI_Comm_free", "MPI_Send", "MPI_Ssend", "MPI_Bsend",
    "MPI_Rsend", "MPI_Recv", "MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend", "MPI_Irecv",
    "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall",
    "MPI_Testany", "MPI_Testsome", "MPI_Request_free", "MPI_Send_init", "MPI_Ssend_init",
    "MPI_Bsend_init", "MPI_Rsend_init", "MPI_Recv_init", "MPI_Start", "MPI_Startall",
    "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Probe", "MPI_Iprobe", "MPI_Barrier",
    "MPI_Buffer_attach", "MPI_Buffer_detach",
    [C_MPROBE] = "MPI_Mprobe", "MPI_Improbe", "MPI_Mrecv", "MPI_Imrecv", "MPI_Cancel",
    "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv",
    "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Reduce_scatter",
    "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan",
    "MPI_Ibarrier", "MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce", "MPI_Igather", "MPI_Igatherv", "MPI_Iscatter",
    "MPI_Iscatterv", "MPI_Iallgather", "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ireduce_scatter",
    "MPI_Ireduce_scatter_block", "MPI_Iscan", "MPI_Iexscan",
    [C_NEIGHBOR_ALLGATHER] = "MPI_Neighbor_allgather", "MPI_Neighbor_allgatherv", "MPI_Neighbor_alltoall",
    "MPI_Neighbor_alltoallv", "MPI_Neighbor_alltoallw", "MPI_Alltoallw", "MPI_Comm_create", "MPI_Comm_split_type",
    "MPI_Comm_create_group", "MPI_Intercomm_create", "MPI_Intercomm_merge", "MPI_Cart_create", "MPI_Cart_sub",
    "MPI_Graph_create", "MPI_Dist_graph_create", "MPI_Dist_graph_create_adjacent", "MPI_Win_create",
    "MPI_Win_allocate", "MPI_Win_fence", "MPI_Win_free", "MPI_Request_get_status",
    "MPI_Win_allocate_shared", "MPI_Win_create_dynamic", "MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate",
    "MPI_Fetch_and_op", "MPI_Compare_and_swap", "MPI_Rput", "MPI_Rget", "MPI_Raccumulate", "MPI_Rget_accumulate",
    "MPI_Win_lock", "MPI_Win_unlock", "MPI_Win_lock_all", "MPI_Win_unlock_all", "MPI_Win_flush", "MPI_Win_flush_all",
    "MPI_Win_flush_local", "MPI_Win_flush_local_all", "MPI_Win_sync", "MPI_Win_post", "MPI_Win_start",
    "MPI_Win_complete", "MPI_Win_wait",
    [C_TYPE_CONTIGUOUS] = "MPI_Type_contiguous", "MPI_Type_vector", "MPI_Type_create_hvector", "MPI_Type_indexed", "MPI_Type_create_hindexed",
    "MPI_Type_create_indexed_block", "MPI_Type_create_hindexed_block", "MPI_Type_create_struct", "MPI_Type_create_subarray", "MPI_Type_create_darray",
    "MPI_Type_create_resized", "MPI_Type_dup", "MPI_Type_free", "MPI_Comm_group", "MPI_Comm_remote_group", "MPI_Group_incl",
    "MPI_Group_excl", "MPI_Group_range_incl", "MPI_Group_range_excl", "MPI_Group_union", "MPI_Group_intersection", "MPI_Group_difference",
    "MPI_Win_get_group", "MPI_Group_free", "MPI_Op_create", "MPI_Op_free", "MPI_Comm_disconnect"};

struct seg_hdr {
    char magic[8];
    uint32_t version, hdr_size;
    int32_t rank, size, pid;
    uint32_t state;
    uint64_t calls;
    uint64_t used; /* bytes of committed records after the header */
    int64_t start_unix, start_mono, end_unix, eager;
    uint32_t hash_mode, cur_call;
    uint64_t cur_pc;
    uint32_t cur_module, thread_level;
    int32_t err_class;
    uint32_t err_call;
    uint64_t err_pc;
    uint32_t err_module;
    uint32_t bsend_overhead; /* MPI_BSEND_OVERHEAD: nonzero says Buffer_attach/detach are recorded (was padding) */
    char library[256];
    char error[512];
    char err_name[64]; /* the MPI function that failed, when not a recorded call (err_call 0) */
    /* Calls poll_from..poll_to were polls that found nothing (MPI_Test*,
       MPI_Iprobe answering no); poll_to is 0 after any other outcome. While
       the rank makes only such polls, the hang monitor counts it as blocked. */
    uint64_t poll_from, poll_to;
    uint32_t cur_site, err_site; /* written by the Python recorder only */
    char devices[32];            /* written by the Python recorder only */
    /* err_rejected: the call that failed (err_call) was refused for its
       arguments (an error class of a bad argument: the call took no effect),
       so the merge leaves it out of the trace. */
    uint32_t err_rejected;
};

/* struct rec is a record being built (rec_begin .. rec_commit); rec_commit
 * encodes it compactly into the segment (see FORMAT). */
/* a run of a type signature: n basic elements of type dt (a DT_ code) */
struct run { uint8_t dt; int64_t n; };

struct rec {
    uint8_t type, call, op, dtype, flag, err;
    uint32_t seq, module;
    int32_t peer, tag, comm, index;
    int64_t count, bytes;
    uint64_t t0, t1, pc, req, hash;
    int32_t source, stag;
    int64_t scount;
    uint32_t nreqs;
    uint64_t addr; /* first byte of a dense buffer, 0 if none or not dense */
    int64_t span;  /* its length */
    uint64_t addr2; /* a collective's receive buffer (addr: its send buffer), as addr */
    int64_t span2;
    uint64_t frame; /* the calling function's frame pointer (call_fp), with a buffer */
    uint32_t ctype, ctype2; /* the C types of addr's and addr2's datatypes (ctype_of) */
    uint64_t *reqs; /* nreqs request ids (or world ranks of a comm record) */
    const struct run *sig; /* the type signature of one element, when mixed (nsig runs) */
    uint32_t nsig;
    const char *path; /* module record */
    size_t cap;
};
_Static_assert(sizeof(struct seg_hdr) <= SEG_HDR, "header size");
_Static_assert(offsetof(struct seg_hdr, err_rejected) == SEG_ERR_REJECTED, "err_rejected offset");

/* ---- state ---- */
static int active;
static pthread_mutex_t mu;
static __thread int depth;
/* call_fp is the frame pointer of the function that made the current
 * call (the saved one at the wrapper's frame pointer: the shim is built
 * with -fno-omit-frame-pointer). The merge finds the program's local
 * variables from it, where the caller keeps one (its debug info says),
 * to check a buffer against the variable it points into (PC sets it). */
static __thread uintptr_t call_fp;
static int seg_fd = -1;
static char *seg_map;
static size_t seg_cap;
static struct seg_hdr *hdr;
static int64_t mono0;
static int hash_mode = HASH_FULL;
static uint32_t next_seq;
static uint64_t next_req = 1;
static int world_rank, world_size;

static inline int64_t mono_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static inline uint64_t tnow(void) { return (uint64_t)(mono_now() - mono0); }
static inline void lock(void) { pthread_mutex_lock(&mu); }
static inline void unlock(void) { pthread_mutex_unlock(&mu); }

/* ---- XXH64 (seed 0), streaming, as github.com/cespare/xxhash/v2 ---- */
#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL
static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t xround(uint64_t acc, uint64_t in) { acc += in * P2; acc = rotl(acc, 31); return acc * P1; }
static inline uint64_t xmerge(uint64_t acc, uint64_t v) { v = xround(0, v); acc ^= v; return acc * P1 + P4; }
struct xxh { uint64_t v1, v2, v3, v4, total; unsigned char mem[32]; unsigned n; };
static void xxh_init(struct xxh *s) { s->v1 = P1 + P2; s->v2 = P2; s->v3 = 0; s->v4 = -P1; s->total = 0; s->n = 0; }
static void xxh_update(struct xxh *s, const unsigned char *p, size_t len) {
    s->total += len;
    if (s->n + len < 32) { memcpy(s->mem + s->n, p, len); s->n += len; return; }
    if (s->n) {
        size_t k = 32 - s->n;
        memcpy(s->mem + s->n, p, k); p += k; len -= k;
        s->v1 = xround(s->v1, rd64(s->mem)); s->v2 = xround(s->v2, rd64(s->mem + 8));
        s->v3 = xround(s->v3, rd64(s->mem + 16)); s->v4 = xround(s->v4, rd64(s->mem + 24));
        s->n = 0;
    }
    uint64_t v1 = s->v1, v2 = s->v2, v3 = s->v3, v4 = s->v4;
    while (len >= 32) {
        v1 = xround(v1, rd64(p)); v2 = xround(v2, rd64(p + 8));
        v3 = xround(v3, rd64(p + 16)); v4 = xround(v4, rd64(p + 24));
        p += 32; len -= 32;
    }
    s->v1 = v1; s->v2 = v2; s->v3 = v3; s->v4 = v4;
    memcpy(s->mem, p, len); s->n = len;
}
static uint64_t xxh_digest(const struct xxh *s) {
    uint64_t h;
    if (s->total >= 32) {
        h = rotl(s->v1, 1) + rotl(s->v2, 7) + rotl(s->v3, 12) + rotl(s->v4, 18);
        h = xmerge(h, s->v1); h = xmerge(h, s->v2); h = xmerge(h, s->v3); h = xmerge(h, s->v4);
    } else {
        h = s->v3 + P5;
    }
    h += s->total;
    const unsigned char *p = s->mem; size_t n = s->n;
    for (; n >= 8; n -= 8, p += 8) { h ^= xround(0, rd64(p)); h = rotl(h, 27) * P1 + P4; }
    if (n >= 4) { h ^= (uint64_t)rd32(p) * P1; h = rotl(h, 23) * P2 + P3; p += 4; n -= 4; }
    for (; n > 0; n--, p++) { h ^= (uint64_t)(*p) * P5; h = rotl(h, 11) * P1; }
    h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32;
    return h;
}

/* hash_bytes is recorder.hashOf of package gpu: full, sample or off, never 0 when hashed. */
/* reading counts the shim's reads of the program's buffers (to hash them)
 * in progress on this thread: a fatal signal then came in the call the
 * shim wraps (a buffer shorter than its count says), not after it. */
static __thread int reading;

static uint64_t hash_bytes_of(const void *buf, size_t len);
static uint64_t hash_bytes(const void *buf, size_t len) {
    reading++;
    uint64_t h = hash_bytes_of(buf, len);
    reading--;
    return h;
}
static uint64_t hash_bytes_of(const void *buf, size_t len) {
    struct xxh s;
    const unsigned char *b = buf;
    if (hash_mode == HASH_OFF) return 0;
    xxh_init(&s);
    if (hash_mode == HASH_SAMPLE && len > 4096) {
        size_t step = len / (4096 / 64);
        for (size_t i = 0; i + 64 <= len; i += step) xxh_update(&s, b + i, 64);
        unsigned char n[8];
        for (int i = 0; i < 8; i++) n[i] = (unsigned char)((uint64_t)len >> (8 * i));
        xxh_update(&s, n, 8);
    } else {
        xxh_update(&s, b, len);
    }
    return xxh_digest(&s) | 1;
}

/* ---- datatypes ----
 * The shim's own look-ups (type sizes, envelopes, counts) must never change
 * what the program does: they run with quiet set, so that an error they
 * raise (a null or freed type the program passes to a call that will itself
 * fail) is ignored by the shim's error handler, and the program's own call
 * reports it, under its own name and site. */
static __thread int quiet;

static int dtype_code(MPI_Datatype dt) {
    if (dt == MPI_DATATYPE_NULL) return DT_OPAQUE;
    if (dt == MPI_FLOAT) return DT_F32;
    if (dt == MPI_DOUBLE) return DT_F64;
    if (dt == MPI_INT || dt == MPI_INT32_T) return DT_I32;
    if (dt == MPI_LONG || dt == MPI_LONG_LONG || dt == MPI_LONG_LONG_INT || dt == MPI_INT64_T) return DT_I64;
    if (dt == MPI_BYTE || dt == MPI_CHAR || dt == MPI_UNSIGNED_CHAR || dt == MPI_UINT8_T || dt == MPI_SIGNED_CHAR) return DT_U8;
    return DT_OPAQUE;
}
static int dtype_known(int code) { return code != DT_OPAQUE; }

/* ctype_of is the C type a predefined datatype stands for (MPI-3.1 sec.
 * 3.2.2), as the merge compares it with a buffer's variable (MPI-3.1 sec.
 * 3.3.1): class << 8 | size in bytes, 0 for a type it does not compare
 * (derived, complex, a pair). MPI_BYTE and MPI_PACKED match any. */
enum { CT_SIGNED = 1, CT_UNSIGNED = 2, CT_FLOAT = 3, CT_CHAR = 4, CT_ANY = 5 };
static uint32_t ctype_of(MPI_Datatype dt) {
#define CT(c, n) ((uint32_t)(c) << 8 | (n))
    if (dt == (MPI_Datatype)0 || dt == MPI_DATATYPE_NULL) return 0;
    if (dt == MPI_BYTE || dt == MPI_PACKED) return CT(CT_ANY, 0);
    if (dt == MPI_CHAR || dt == MPI_SIGNED_CHAR || dt == MPI_UNSIGNED_CHAR || dt == MPI_INT8_T || dt == MPI_UINT8_T ||
        dt == MPI_C_BOOL)
        return CT(CT_CHAR, 1);
    if (dt == MPI_SHORT || dt == MPI_INT16_T) return CT(CT_SIGNED, sizeof(short));
    if (dt == MPI_UNSIGNED_SHORT || dt == MPI_UINT16_T) return CT(CT_UNSIGNED, sizeof(short));
    if (dt == MPI_INT || dt == MPI_INT32_T) return CT(CT_SIGNED, sizeof(int));
    if (dt == MPI_UNSIGNED || dt == MPI_UINT32_T) return CT(CT_UNSIGNED, sizeof(int));
    if (dt == MPI_LONG) return CT(CT_SIGNED, sizeof(long));
    if (dt == MPI_UNSIGNED_LONG) return CT(CT_UNSIGNED, sizeof(long));
    if (dt == MPI_LONG_LONG || dt == MPI_LONG_LONG_INT || dt == MPI_INT64_T) return CT(CT_SIGNED, 8);
    if (dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_UINT64_T) return CT(CT_UNSIGNED, 8);
    if (dt == MPI_FLOAT) return CT(CT_FLOAT, sizeof(float));
    if (dt == MPI_DOUBLE) return CT(CT_FLOAT, sizeof(double));
    if (dt == MPI_LONG_DOUBLE) return CT(CT_FLOAT, sizeof(long double));
    return 0;
#undef CT
}

/* redop_code is the stable code of a reduction op: a predefined op's
 * RED_ code, RED_USER for one made by MPI_Op_create (its handle is this
 * process's own: not comparable across ranks), RED_NONE for MPI_OP_NULL
 * (the call fails). */
static int redop_code(MPI_Op op) {
    if (op == MPI_OP_NULL) return RED_NONE;
    if (op == MPI_MAX) return RED_MAX;
    if (op == MPI_MIN) return RED_MIN;
    if (op == MPI_SUM) return RED_SUM;
    if (op == MPI_PROD) return RED_PROD;
    if (op == MPI_LAND) return RED_LAND;
    if (op == MPI_BAND) return RED_BAND;
    if (op == MPI_LOR) return RED_LOR;
    if (op == MPI_BOR) return RED_BOR;
    if (op == MPI_LXOR) return RED_LXOR;
    if (op == MPI_BXOR) return RED_BXOR;
    if (op == MPI_MAXLOC) return RED_MAXLOC;
    if (op == MPI_MINLOC) return RED_MINLOC;
#ifdef MPI_REPLACE
    if (op == MPI_REPLACE) return RED_REPLACE;
#endif
#ifdef MPI_NO_OP
    if (op == MPI_NO_OP) return RED_NO_OP;
#endif
    return RED_USER;
}

/* named reports whether dt is a predefined (named) datatype. */
static int named(MPI_Datatype dt) {
    int ni, na, nd, comb, rc;
    if (dt == MPI_DATATYPE_NULL) return 0;
    if (dtype_known(dtype_code(dt))) return 1;
    quiet++;
    rc = PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb);
    quiet--;
    return rc == MPI_SUCCESS && comb == MPI_COMBINER_NAMED;
}

/* contiguous reports whether count elements of dt are one contiguous range starting at buf. */
static int contiguous(MPI_Datatype dt) { return named(dt); }

#define SIG_DEPTH 16
#define SIG_STACK 64
#define SIG_RUNS 64
/* sig_push appends n elements of type dt to the k runs of runs (merged with
 * the last run when it has that type); -1 when cap runs do not suffice. */
static int sig_push(struct run *runs, int k, int cap, int dt, int64_t n) {
    if (k < 0) return -1;
    if (n == 0) return k;
    if (k > 0 && runs[k - 1].dt == dt) { runs[k - 1].n += n; return k; }
    if (k == cap) return -1;
    runs[k].dt = (uint8_t)dt; runs[k].n = n;
    return k + 1;
}
/* sig_append appends rep copies of the ns runs of sub. */
static int sig_append(struct run *runs, int k, int cap, const struct run *sub, int ns, int64_t rep) {
    if (k < 0 || ns < 0) return -1;
    if (rep <= 0 || ns == 0) return k;
    if (ns == 1) return sig_push(runs, k, cap, sub[0].dt, sub[0].n * rep);
    for (int64_t j = 0; j < rep && k >= 0; j++) /* ends within about cap pushes: adjacent runs differ */
        for (int i = 0; i < ns && k >= 0; i++) k = sig_push(runs, k, cap, sub[i].dt, sub[i].n);
    return k;
}

/* signature flattens the type signature of one element of dt (the sequence
 * of basic types, MPI 3.3.1) into at most cap runs, adjacent runs of one type
 * merged, and returns how many; -1 when it cannot: a basic type p2ptrace does
 * not know, darray or Fortran types, more than cap runs, or unreadable.
 * contiguous(2, MPI_INT), vector(2, 1, 4, MPI_INT) and MPI_INT count 2 have
 * one signature (int32 x 2); contiguous(2, MPI_DOUBLE) another; a struct
 * {int, double} has two runs (int32 x 1, float64 x 1). */
/* contents holds a derived datatype's MPI_Type_get_contents, in arrays on
 * the stack up to SIG_STACK entries each (contents_get, contents_free). */
struct contents {
    int ni, na, nd, comb, ok;
    int *iv;
    MPI_Aint *av;
    MPI_Datatype *dv;
    int is[SIG_STACK];
    MPI_Aint as[SIG_STACK];
    MPI_Datatype ds[SIG_STACK];
};
/* contents_get reads the envelope of dt into c, and, when dt is derived,
 * its contents (c->ok: read). It returns 0 for a named type or an envelope
 * the library refuses, with nothing to free. quiet held by the caller. */
static int contents_get(MPI_Datatype dt, struct contents *c) {
    c->iv = c->is; c->av = c->as; c->dv = c->ds; c->ok = 0;
    if (PMPI_Type_get_envelope(dt, &c->ni, &c->na, &c->nd, &c->comb) != MPI_SUCCESS || c->comb == MPI_COMBINER_NAMED)
        return 0;
    if (c->ni > SIG_STACK) c->iv = malloc(sizeof *c->iv * c->ni);
    if (c->na > SIG_STACK) c->av = malloc(sizeof *c->av * c->na);
    if (c->nd > SIG_STACK) c->dv = malloc(sizeof *c->dv * c->nd);
    c->ok = c->iv && c->av && c->dv && PMPI_Type_get_contents(dt, c->ni, c->na, c->nd, c->iv, c->av, c->dv) == MPI_SUCCESS;
    return 1;
}
/* contents_free frees what contents_get made: the derived types the
 * contents returned (MPI-3.1 sec. 4.1.13: the caller frees them) and the
 * arrays past the stack's. quiet held by the caller. */
static void contents_free(struct contents *c) {
    for (int i = 0; c->ok && i < c->nd; i++) {
        int dni, dna, dnd, dcomb;
        if (PMPI_Type_get_envelope(c->dv[i], &dni, &dna, &dnd, &dcomb) == MPI_SUCCESS && dcomb != MPI_COMBINER_NAMED)
            PMPI_Type_free(&c->dv[i]);
    }
    if (c->iv != c->is) free(c->iv);
    if (c->av != c->as) free(c->av);
    if (c->dv != c->ds) free(c->dv);
}

static int signature(MPI_Datatype dt, struct run *runs, int cap, int level) {
    int code, k = -1;
    if (dt == MPI_DATATYPE_NULL || level > SIG_DEPTH) return -1;
    if ((code = dtype_code(dt)) != DT_OPAQUE) return sig_push(runs, 0, cap, code, 1);
    quiet++;
    struct contents ct;
    if (!contents_get(dt, &ct)) {
        quiet--;
        return -1; /* a basic type p2ptrace does not know */
    }
    int *iv = ct.iv, nd = ct.nd, comb = ct.comb;
    MPI_Datatype *dv = ct.dv;
    if (ct.ok) {
        struct run sub[SIG_RUNS];
        int64_t rep = 0;
        k = 0;
        switch (comb) {
        case MPI_COMBINER_DUP: case MPI_COMBINER_RESIZED: rep = 1; break;
        case MPI_COMBINER_CONTIGUOUS: rep = iv[0]; break;
        case MPI_COMBINER_VECTOR: case MPI_COMBINER_HVECTOR:
        case MPI_COMBINER_INDEXED_BLOCK: case MPI_COMBINER_HINDEXED_BLOCK: rep = (int64_t)iv[0] * iv[1]; break;
        case MPI_COMBINER_INDEXED: case MPI_COMBINER_HINDEXED:
            for (int i = 0; i < iv[0]; i++) rep += iv[1 + i];
            break;
        case MPI_COMBINER_SUBARRAY:
            rep = 1;
            for (int i = 0; i < iv[0]; i++) rep *= iv[1 + iv[0] + i];
            break;
        case MPI_COMBINER_STRUCT:
            for (int i = 0; i < iv[0] && k >= 0; i++)
                if (iv[1 + i] != 0) k = sig_append(runs, k, cap, sub, signature(dv[i], sub, cap, level + 1), iv[1 + i]);
            break;
        default: k = -1; break; /* darray, f90 types: not flattened */
        }
        if (comb != MPI_COMBINER_STRUCT && k >= 0) k = nd >= 1 ? sig_append(runs, 0, cap, sub, signature(dv[0], sub, cap, level + 1), rep) : -1;
    }
    contents_free(&ct);
    quiet--;
    return k;
}

/* predefined_code is 1 + the index of dt among the predefined datatypes of
 * C (MPI-3.1 sec. 3.2.2, 5.9.4), the same in every process (a handle is an
 * address of this process's library); 0 if dt is none of them. A handle
 * the library gives two names (MPI_LONG_LONG_INT, MPI_LONG_LONG) has the
 * first's code. */
static MPI_Datatype ptab[48]; /* the predefined datatypes of C, in code order (ptab_fill) */
static int nptab;
static void ptab_fill(void) {
    const MPI_Datatype tab[] = {
        MPI_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG_INT, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR,
        MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE,
        MPI_LONG_DOUBLE, MPI_WCHAR, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T,
        MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
        MPI_C_LONG_DOUBLE_COMPLEX, MPI_BYTE, MPI_PACKED, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_FLOAT_INT,
        MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT,
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0] && i < sizeof ptab / sizeof ptab[0]; i++) ptab[nptab++] = tab[i];
}
static int predefined_code(MPI_Datatype dt) {
    if (!nptab) ptab_fill();
    if (dt == MPI_DATATYPE_NULL) return 0;
    for (int i = 0; i < nptab; i++)
        if (ptab[i] == dt) return i + 1;
    return 0;
}
/* predefined_at is the predefined datatype of code (MPI_DATATYPE_NULL if none). */
static MPI_Datatype predefined_at(int code) {
    if (!nptab) ptab_fill();
    return code >= 1 && code <= nptab ? ptab[code - 1] : MPI_DATATYPE_NULL;
}

/* basic_code is the predefined_code of the one predefined datatype dt is
 * made of: dt's own when predefined, a derived type's when every type it
 * is built from is made of the same one; 0 when it mixes several or holds
 * one p2ptrace does not know. Concurrent accumulates to a location are
 * element-wise atomic only with the same predefined datatype (MPI-3.1
 * sec. 11.7.1): the merge compares these codes. */
static int basic_code(MPI_Datatype dt, int level) {
    int code = -1;
    if (dt == MPI_DATATYPE_NULL || level > SIG_DEPTH) return 0;
    int c = predefined_code(dt);
    if (c) return c;
    quiet++;
    struct contents ct;
    if (!contents_get(dt, &ct)) {
        quiet--;
        return 0;
    }
    for (int i = 0; ct.ok && i < ct.nd && code != 0; i++) {
        int sub = basic_code(ct.dv[i], level + 1);
        code = code < 0 || code == sub ? sub : 0;
    }
    contents_free(&ct);
    quiet--;
    return code < 0 ? 0 : code;
}

/* element_code is basic_code(dt) | the size of that predefined datatype
 * << 8 (0: none): an accumulate's elements, which the merge compares by
 * type and by where they lie. */
static int element_code(MPI_Datatype dt) {
    int code = basic_code(dt, 0), size = 0;
    if (!code) return 0;
    quiet++;
    if (PMPI_Type_size(predefined_at(code), &size) != MPI_SUCCESS || size < 0 || size > 0xffff) size = 0;
    quiet--;
    return code | size << 8;
}

/* keep_type returns a handle of dt that stays valid until drop_type, even
 * when the program frees dt while a request using it is pending (legal):
 * a duplicate for derived types, dt itself for named ones. */
static MPI_Datatype keep_type(MPI_Datatype dt, uint8_t *owned) {
    MPI_Datatype d = dt;
    *owned = 0;
    if (dt == MPI_DATATYPE_NULL || named(dt)) return dt;
    quiet++;
    if (PMPI_Type_dup(dt, &d) == MPI_SUCCESS) *owned = 1;
    else d = dt;
    quiet--;
    return d;
}
static void drop_type(MPI_Datatype *dt, uint8_t *owned) {
    if (!*owned) return;
    quiet++;
    PMPI_Type_free(dt);
    quiet--;
    *owned = 0;
}

/* bytes_of is the size of count elements of dt (0 for a null type). */
static int64_t bytes_of(int64_t count, MPI_Datatype dt) {
    int ts = 0;
    if (dt == MPI_DATATYPE_NULL) return 0;
    quiet++;
    PMPI_Type_size(dt, &ts);
    quiet--;
    return count * ts;
}

/* dense_span sets the address and length of the bytes count elements of dt
 * at buf cover, when they are one range without holes; 0 otherwise. */
static void dense_span(const void *buf, int count, MPI_Datatype dt, int size, uint64_t *addr, int64_t *span) {
    MPI_Aint lb = 0, ext = 0, tlb = 0, text = 0;
    *addr = 0; *span = 0;
    if (!buf || buf == MPI_BOTTOM || buf == MPI_IN_PLACE || count <= 0 || size <= 0 || dt == MPI_DATATYPE_NULL) return;
    if (dtype_known(dtype_code(dt))) { /* a basic type: no holes, no lower bound */
        *addr = (uint64_t)(uintptr_t)buf;
        *span = (int64_t)count * size;
        return;
    }
    quiet++;
    int ok = PMPI_Type_get_extent(dt, &lb, &ext) == MPI_SUCCESS && PMPI_Type_get_true_extent(dt, &tlb, &text) == MPI_SUCCESS;
    quiet--;
    if (!ok || ext != size || text != size) return;
    *addr = (uint64_t)(uintptr_t)buf + (uint64_t)tlb;
    *span = (int64_t)count * size;
}

static unsigned char *pack_buf;
static int pack_cap;

/* hash_data hashes count elements of dt at buf (a derived type through MPI_Pack). Lock held. */
static uint64_t hash_data_of(const void *buf, int count, MPI_Datatype dt);
static uint64_t hash_data(const void *buf, int count, MPI_Datatype dt) {
    reading++;
    uint64_t h = hash_data_of(buf, count, dt);
    reading--;
    return h;
}
/* past_stack says whether n bytes at buf begin on this thread's stack and
 * run past its top, into memory that is not there: the shim does not
 * hash them (it would die of SIGSEGV before recording the call, whose
 * buffer the merge then could not name: buffer-overrun); the library's
 * own read of them is the program's crash. The bounds are the thread's,
 * taken once. */
static __thread uintptr_t stack_lo, stack_hi;
static int past_stack(const void *buf, size_t n) {
    if (!stack_hi) {
        pthread_attr_t a;
        void *lo = NULL;
        size_t size = 0;
        stack_hi = 1; /* (unknown: nothing is on it) */
        if (pthread_getattr_np(pthread_self(), &a) == 0) {
            if (pthread_attr_getstack(&a, &lo, &size) == 0 && size > 0) {
                stack_lo = (uintptr_t)lo;
                stack_hi = stack_lo + size;
            }
            pthread_attr_destroy(&a);
        }
    }
    uintptr_t b = (uintptr_t)buf;
    return b >= stack_lo && b < stack_hi && n > stack_hi - b;
}
static uint64_t hash_data_of(const void *buf, int count, MPI_Datatype dt) {
    int tsize = 0;
    if (hash_mode == HASH_OFF || count <= 0 || buf == NULL || dt == MPI_DATATYPE_NULL) return 0;
    if (contiguous(dt)) {
        quiet++;
        PMPI_Type_size(dt, &tsize);
        quiet--;
        if (past_stack(buf, (size_t)count * (size_t)tsize)) return 0;
        return hash_bytes(buf, (size_t)count * (size_t)tsize);
    }
    int need = 0, pos = 0, ok;
    quiet++;
    ok = PMPI_Pack_size(count, dt, MPI_COMM_WORLD, &need) == MPI_SUCCESS && need > 0;
    quiet--;
    if (!ok) return 0;
    if (need > pack_cap) {
        unsigned char *nb = realloc(pack_buf, need);
        if (!nb) return 0;
        pack_buf = nb; pack_cap = need;
    }
    quiet++;
    ok = PMPI_Pack(buf, count, dt, pack_buf, need, &pos, MPI_COMM_WORLD) == MPI_SUCCESS;
    quiet--;
    if (!ok) return 0;
    return hash_bytes(pack_buf, pos);
}

/* ---- heap blocks ----
 * The shim stands in for malloc, calloc, realloc and free (the next
 * allocator's, dlsym RTLD_NEXT: glibc's, or one the program links) and
 * notes the size of each block while the job is recorded, so that a
 * call's buffer that starts a block can be checked against it
 * (buffer-overrun; rec_commit writes it). A lock-free table of 64 Ki slots
 * (1 MiB, touched as used: a table of 1 Mi slots cost a 4-rank job 3x its
 * page faults and +50% time), open addressing, at most HEAP_PROBES probes:
 * a block that finds no slot, one an allocator made otherwise
 * (posix_memalign, strdup...) or one that libc grew inside its own calls
 * is simply not known (heap_block checks the allocator's usable size
 * against the noted one). */
#define HEAP_SLOTS (1u << 16)
#define HEAP_PROBES 64
#define HEAP_TOMB ((uintptr_t)1)
struct heap_slot { uintptr_t p; size_t n; };
static struct heap_slot *heap_tab;
static int heap_on; /* 0: not decided yet, 1: noting, -1: not */
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static size_t (*next_usable)(void *);
/* boot serves the allocations dlsym makes while the shim looks the next
 * allocator up (never freed to it). */
static _Alignas(16) char boot[8192];
static size_t boot_used;
static __thread int resolving;
static int from_boot(const void *p) { return (const char *)p >= boot && (const char *)p < boot + sizeof boot; }
static void *boot_alloc(size_t n) {
    size_t at = __atomic_fetch_add(&boot_used, (n + 15) & ~(size_t)15, __ATOMIC_RELAXED);
    return at + n <= sizeof boot ? boot + at : NULL;
}
static int heap_resolve(void) {
    if (next_free) return 1;
    if (resolving) return 0;
    resolving = 1;
    next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    next_usable = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    void (*f)(void *) = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    resolving = 0;
    if (!next_malloc || !next_calloc || !next_realloc || !f) return 0;
    __atomic_store_n(&next_free, f, __ATOMIC_RELEASE);
    return 1;
}
extern char **environ;
/* heap_noting decides once, when the environment is there, whether the job
 * is recorded: only then are blocks noted. */
static int heap_noting(void) {
    if (heap_on) return heap_on > 0;
    if (!environ) return 0;
    const char *d = getenv("P2PTRACE_SEGDIR");
    int on = -1;
    if (d && *d) {
        void *t = mmap(NULL, sizeof(struct heap_slot) * HEAP_SLOTS, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (t != MAP_FAILED) {
            heap_tab = t;
            on = 1;
        }
    }
    heap_on = on;
    return on > 0;
}
static inline uint32_t heap_hash(uintptr_t p) { return (uint32_t)(((uint64_t)(p >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - 16)); }
static void heap_note(void *ptr, size_t n) {
    if (!ptr || !heap_noting()) return;
    uintptr_t p = (uintptr_t)ptr;
    for (uint32_t k = 0, i = heap_hash(p); k < HEAP_PROBES; k++, i = (i + 1) & (HEAP_SLOTS - 1)) {
        struct heap_slot *s = &heap_tab[i];
        uintptr_t cur = __atomic_load_n(&s->p, __ATOMIC_ACQUIRE);
        if (cur == p || ((cur == 0 || cur == HEAP_TOMB) && __atomic_compare_exchange_n(&s->p, &cur, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))) {
            __atomic_store_n(&s->n, n, __ATOMIC_RELEASE);
            return;
        }
    }
}
static void heap_forget(void *ptr) {
    if (!ptr || heap_on <= 0) return;
    uintptr_t p = (uintptr_t)ptr;
    for (uint32_t k = 0, i = heap_hash(p); k < HEAP_PROBES; k++, i = (i + 1) & (HEAP_SLOTS - 1)) {
        struct heap_slot *s = &heap_tab[i];
        uintptr_t cur = __atomic_load_n(&s->p, __ATOMIC_ACQUIRE);
        if (cur == 0) return;
        if (cur == p) {
            __atomic_store_n(&s->n, 0, __ATOMIC_RELEASE);
            __atomic_store_n(&s->p, HEAP_TOMB, __ATOMIC_RELEASE);
            return;
        }
    }
}
/* heap_block is the size of the live block that starts at addr, 0 if the
 * shim knows none: the noted size, when the allocator's usable size still
 * agrees with it (libc may have grown or freed the block in its own calls,
 * getline's). */
static int64_t heap_block(uint64_t addr) {
    if (!addr || heap_on <= 0 || !next_usable) return 0;
    uintptr_t p = (uintptr_t)addr;
    for (uint32_t k = 0, i = heap_hash(p); k < HEAP_PROBES; k++, i = (i + 1) & (HEAP_SLOTS - 1)) {
        struct heap_slot *s = &heap_tab[i];
        uintptr_t cur = __atomic_load_n(&s->p, __ATOMIC_ACQUIRE);
        if (cur == 0) return 0;
        if (cur != p) continue;
        /* glibc rounds a block up by at most 31 bytes, one it maps (64 KiB
         * or more) up to its page: more than that, and the block is not the
         * one noted (an allocator of size classes: its blocks go unchecked) */
        size_t n = __atomic_load_n(&s->n, __ATOMIC_ACQUIRE), u = next_usable((void *)p);
        size_t slack = n >= (64u << 10) ? 4096 + 64 : 31;
        return n > 0 && u >= n && u - n <= slack ? (int64_t)n : 0;
    }
    return 0;
}
static void rel_freed(void *p, uintptr_t pc); /* (buffers released while in use) */
void *malloc(size_t n) {
    if (!heap_resolve()) return boot_alloc(n);
    void *p = next_malloc(n);
    heap_note(p, n);
    return p;
}
void *calloc(size_t k, size_t n) {
    if (!heap_resolve()) {
        void *p = boot_alloc(k * n); /* (boot is zero: never reused) */
        return p;
    }
    void *p = next_calloc(k, n);
    if (p && (n == 0 || k <= SIZE_MAX / n)) heap_note(p, k * n);
    return p;
}
void *realloc(void *old, size_t n) {
    if (!heap_resolve() || from_boot(old)) {
        void *p = heap_resolve() ? next_malloc(n) : boot_alloc(n);
        if (p && old) { /* (old is a boot block, or NULL: none but boot's are made yet) */
            size_t left = (size_t)(boot + sizeof boot - (const char *)old);
            memcpy(p, old, n < left ? n : left);
        }
        heap_note(p, n);
        return p;
    }
    heap_forget(old);
    void *p = next_realloc(old, n);
    if (old && (p ? p != old : n == 0)) rel_freed(old, (uintptr_t)__builtin_return_address(0)); /* moved, or freed */
    if (p) heap_note(p, n);
    else if (old && n) heap_note(old, 0); /* (failed: old stays, its size unknown) */
    return p;
}
/* free_mem_pc is the program's MPI_Free_mem call this thread is in (0:
 * none): the library releases MPI_Alloc_mem's memory with free(), and a
 * window's memory released so is named by the program's call, not by the
 * library's function that called free (rel_freed). */
static __thread uintptr_t free_mem_pc;
void free(void *p) {
    if (!p || from_boot(p)) return;
    rel_freed(p, free_mem_pc ? free_mem_pc : (uintptr_t)__builtin_return_address(0));
    heap_forget(p);
    if (heap_resolve()) next_free(p);
}
int MPI_Free_mem(void *base) {
    uintptr_t outer = free_mem_pc;
    free_mem_pc = (uintptr_t)__builtin_return_address(0);
    int rc = PMPI_Free_mem(base);
    free_mem_pc = outer;
    return rc;
}

/* ---- segment ---- */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
/* seg_populate write-faults a new part of the mapping in one system call:
 * page faults taken one by one on the hot path cost microseconds each on
 * virtual machines; populated in bulk they cost a fraction. Best effort. */
static void seg_populate(size_t off, size_t len) { madvise(seg_map + off, len, MADV_POPULATE_WRITE); }

static int seg_grow(size_t need) {
    size_t ncap = seg_cap;
    while (ncap < need) ncap = ncap < (64u << 20) ? ncap * 2 : ncap + (64u << 20);
    if (ftruncate(seg_fd, ncap) != 0) return -1;
    void *m = mremap(seg_map, seg_cap, ncap, MREMAP_MAYMOVE);
    if (m == MAP_FAILED) return -1;
    size_t old = seg_cap;
    seg_map = m; seg_cap = ncap; hdr = (struct seg_hdr *)seg_map;
    seg_populate(old, ncap - old);
    return 0;
}

/* modules seen, by id - 1 (see module_of) */
#define NMOD 4096 /* loaded objects, and Python call lines (mpi4py, see py_module) */
static struct { uintptr_t base; char *py; int pyext; } mods[NMOD];
static int nmods;

/* Records being built: a few slots, because building one can start another
 * (a module or communicator seen for the first time while a post is built). */
#define NSLOTS 4
static struct rec slots[NSLOTS];
static int nslots;
static uint64_t last_t; /* time of the previous record's t0/t1, for deltas */

/* rec_begin starts a record with room for nreqs trailer entries. Lock held. */
static struct rec *rec_begin(size_t nreqs) {
    if (nslots == NSLOTS) return NULL;
    struct rec *r = &slots[nslots];
    if (nreqs > r->cap) {
        uint64_t *q = realloc(r->reqs, sizeof *q * nreqs);
        if (!q) return NULL;
        r->reqs = q;
        r->cap = nreqs;
    }
    uint64_t *q = r->reqs;
    size_t cap = r->cap;
    memset(r, 0, sizeof *r);
    r->reqs = q;
    r->cap = cap;
    nslots++;
    return r;
}

static inline uint8_t *put_uv(uint8_t *p, uint64_t v) {
    while (v >= 0x80) { *p++ = (uint8_t)v | 0x80; v >>= 7; }
    *p++ = (uint8_t)v;
    return p;
}
static inline uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

/* rec_commit encodes r at the end of the record area and publishes it by
 * advancing hdr->used; then releases the slot. Lock held. */
static void rec_commit(struct rec *r) {
    size_t plen = r->path ? strlen(r->path) : 0;
    size_t max = 4 + 1 + 5 + 31 * 10 + 8 + 10 + (size_t)r->nreqs * 10 + plen + 10 + 10 + (size_t)r->nsig * 11;
    size_t off = SEG_HDR + hdr->used;
    nslots--;
    if (max >= (1u << 24)) return;
    if (off + max > seg_cap && seg_grow(off + max) != 0) return;
    uint8_t *p0 = (uint8_t *)seg_map + off, *p = p0 + 4;
    *p++ = r->call;
    uint64_t pcoff = 0;
    if (r->pc && r->module && r->type != R_MODULE) pcoff = r->pc - (uint64_t)mods[r->module - 1].base;
    else pcoff = r->pc;
    int64_t d0 = r->t0 ? (int64_t)(r->t0 - last_t) : 0;
    int64_t d1 = r->t1 ? (int64_t)(r->t1 - (r->t0 ? r->t0 : last_t)) : 0;
    uint32_t mask = 0;
    if (r->op) mask |= 1u << 0;
    if (r->dtype) mask |= 1u << 1;
    if (r->flag) mask |= 1u << 2;
    if (r->err) mask |= 1u << 3;
    if (r->type != R_POST && r->seq) mask |= 1u << 4;
    if (r->module) mask |= 1u << 5;
    if (r->peer) mask |= 1u << 6;
    if (r->tag) mask |= 1u << 7;
    if (r->comm) mask |= 1u << 8;
    if (r->index) mask |= 1u << 9;
    if (r->count) mask |= 1u << 10;
    if (r->bytes) mask |= 1u << 11;
    if (r->t0) mask |= 1u << 12;
    if (r->t1) mask |= 1u << 13;
    if (pcoff) mask |= 1u << 14;
    if (r->req) mask |= 1u << 15;
    if (r->hash) mask |= 1u << 16;
    if (r->source) mask |= 1u << 17;
    if (r->stag) mask |= 1u << 18;
    if (r->scount) mask |= 1u << 19;
    if (r->nreqs) mask |= 1u << 20;
    if (plen) mask |= 1u << 21;
    if (r->addr && r->span > 0) mask |= (1u << 22) | (1u << 23);
    if (r->nsig) mask |= 1u << 25;
    int bufs = (r->addr && r->span > 0) || (r->addr2 && r->span2 > 0);
    if (bufs && r->frame) mask |= 1u << 26;
    if (r->addr2 && r->span2 > 0) mask |= 1u << 27;
    /* the heap blocks the buffers start, for the buffer-overrun rule */
    int64_t heap1 = r->frame && r->span > 0 ? heap_block(r->addr) : 0, heap2 = r->frame && r->span2 > 0 ? heap_block(r->addr2) : 0;
    if (heap1 || heap2) mask |= 1u << 28;
    int ctypes = r->frame && ((r->span > 0 && r->ctype) || (r->span2 > 0 && r->ctype2));
    if (ctypes) mask |= 1u << 29;
    p = put_uv(p, mask);
    if (r->op) *p++ = r->op;
    if (r->dtype) *p++ = r->dtype;
    if (r->flag) *p++ = 1;
    if (r->err) *p++ = r->err;
    if (mask & (1u << 4)) p = put_uv(p, r->seq);
    if (r->module) p = put_uv(p, r->module);
    if (r->peer) p = put_uv(p, zz(r->peer));
    if (r->tag) p = put_uv(p, zz(r->tag));
    if (r->comm) p = put_uv(p, zz(r->comm));
    if (r->index) p = put_uv(p, zz(r->index));
    if (r->count) p = put_uv(p, zz(r->count));
    if (r->bytes) p = put_uv(p, zz(r->bytes));
    if (r->t0) p = put_uv(p, zz(d0));
    if (r->t1) p = put_uv(p, zz(d1));
    if (pcoff) p = put_uv(p, pcoff);
    if (r->req) p = put_uv(p, r->req);
    if (r->hash) { memcpy(p, &r->hash, 8); p += 8; }
    if (r->source) p = put_uv(p, zz(r->source));
    if (r->stag) p = put_uv(p, zz(r->stag));
    if (r->scount) p = put_uv(p, zz(r->scount));
    if (r->nreqs) {
        p = put_uv(p, r->nreqs);
        uint64_t prev = 0;
        for (uint32_t i = 0; i < r->nreqs; i++) { p = put_uv(p, zz((int64_t)(r->reqs[i] - prev))); prev = r->reqs[i]; }
    }
    if (plen) { p = put_uv(p, plen); memcpy(p, r->path, plen); p += plen; }
    if (mask & (1u << 22)) { p = put_uv(p, r->addr); p = put_uv(p, (uint64_t)r->span); }
    if (r->nsig) {
        p = put_uv(p, r->nsig);
        for (uint32_t i = 0; i < r->nsig; i++) { *p++ = r->sig[i].dt; p = put_uv(p, (uint64_t)r->sig[i].n); }
    }
    if (mask & (1u << 26)) p = put_uv(p, r->frame);
    if (mask & (1u << 27)) { p = put_uv(p, r->addr2); p = put_uv(p, (uint64_t)r->span2); }
    if (mask & (1u << 28)) { p = put_uv(p, (uint64_t)heap1); p = put_uv(p, (uint64_t)heap2); }
    if (mask & (1u << 29)) { p = put_uv(p, r->span > 0 ? r->ctype : 0); p = put_uv(p, r->span2 > 0 ? r->ctype2 : 0); }
    if (r->t1) last_t = r->t1;
    else if (r->t0) last_t = r->t0;
    uint32_t len = (uint32_t)(p - p0);
    uint32_t w = len | ((uint32_t)r->type << 24);
    memcpy(p0, &w, 4);
    uint64_t used = hdr->used + len;
    __atomic_store_n(&hdr->used, used, __ATOMIC_RELEASE);
    /* Warm the cache lines the next records go to: the first write to fresh
     * memory otherwise stalls the next call for a memory round trip. */
    size_t next = SEG_HDR + used;
    if (next + 256 <= seg_cap) {
        __builtin_prefetch(seg_map + next, 1, 3);
        __builtin_prefetch(seg_map + next + 64, 1, 3);
        __builtin_prefetch(seg_map + next + 128, 1, 3);
        __builtin_prefetch(seg_map + next + 192, 1, 3);
    }
}

/* ---- modules (call sites) ---- */
#define PCC 1024
static struct { uintptr_t pc; uint32_t mod; } pccache[PCC];

/* mpi4py: a call made from mpi4py's extension module is named by the
 * Python line that called it, asked of the interpreter (dlsym: nothing is
 * linked). The line becomes a module of its own, with load base 0 and path
 * "FILE.py:LINE" (Merge takes such a path as the site, whatever the pc).
 * mpi4py releases the GIL around MPI calls: PyGILState_Ensure takes it back
 * for the look-up (a Python thread holding the GIL while it waits for the
 * shim's lock would deadlock: mpi4py programs are recorded single-threaded). */
static struct {
    int (*initialized)(void);
    int (*ensure)(void);
    void (*release)(int);
    void *(*frame)(void);
    void *(*back)(void *);
    void *(*code)(void *);
    int (*line)(void *);
    void *(*getattr)(void *, const char *);
    const char *(*utf8)(void *);
    void (*decref)(void *);
    int ok;
    char pkg[PATH_MAX]; /* mpi4py's package directory, with its final slash */
} py;

static void py_init(void) {
    if (py.ok) return;
    py.ok = -1;
#define PYSYM(f, n) if (!(*(void **)&py.f = dlsym(RTLD_DEFAULT, n))) return;
    PYSYM(initialized, "Py_IsInitialized") PYSYM(ensure, "PyGILState_Ensure") PYSYM(release, "PyGILState_Release")
    PYSYM(frame, "PyEval_GetFrame") PYSYM(back, "PyFrame_GetBack") PYSYM(code, "PyFrame_GetCode")
    PYSYM(line, "PyFrame_GetLineNumber") PYSYM(getattr, "PyObject_GetAttrString") PYSYM(utf8, "PyUnicode_AsUTF8")
    PYSYM(decref, "Py_DecRef")
#undef PYSYM
    py.ok = 1;
}

/* py_where writes the innermost Python frame outside mpi4py as "FILE:LINE". */
static int py_where(char *buf, size_t n) {
    py_init();
    if (py.ok != 1 || !py.initialized()) return 0;
    int g = py.ensure();
    int found = 0;
    void *f = py.frame(); /* borrowed */
    void *own = NULL;
    while (f && !found) {
        void *code = py.code(f);
        void *name = code ? py.getattr(code, "co_filename") : NULL;
        const char *file = name ? py.utf8(name) : NULL;
        if (file && strncmp(file, py.pkg, strlen(py.pkg)) != 0) {
            char abs[PATH_MAX];
            if (file[0] != '/' && file[0] != '<' && realpath(file, abs)) file = abs;
            snprintf(buf, n, "%s:%d", file, py.line(f));
            found = 1;
        }
        if (name) py.decref(name);
        if (code) py.decref(code);
        void *b = py.back(f); /* new reference */
        if (own) py.decref(own);
        own = b;
        f = b;
    }
    if (own) py.decref(own);
    py.release(g);
    return found;
}

static uint32_t py_module(void) {
    char where[PATH_MAX + 32];
    if (!py_where(where, sizeof where)) return 0;
    for (int i = 0; i < nmods; i++)
        if (mods[i].py && strcmp(mods[i].py, where) == 0) return (uint32_t)i + 1;
    if (nmods >= NMOD) return 0;
    char *dup = strdup(where);
    struct rec *r = dup ? rec_begin(0) : NULL;
    if (!r) { free(dup); return 0; }
    mods[nmods].base = 0;
    mods[nmods].py = dup;
    uint32_t id = ++nmods;
    r->type = R_MODULE; r->module = id; r->pc = 0; r->path = dup;
    rec_commit(r);
    return id;
}

static uint32_t module_of(uintptr_t pc) {
    size_t h = (pc >> 2) & (PCC - 1);
    if (pccache[h].pc == pc) {
        uint32_t m = pccache[h].mod;
        if (m && mods[m - 1].pyext) {
            uint32_t p = py_module();
            if (p) return p;
        }
        return m;
    }
    Dl_info info;
    uint32_t id = 0;
    if (dladdr((void *)pc, &info) && info.dli_fbase) {
        uintptr_t base = (uintptr_t)info.dli_fbase;
        for (int i = 0; i < nmods; i++)
            if (mods[i].base == base) { id = i + 1; break; }
        if (!id && nmods < NMOD) {
            char path[PATH_MAX];
            if (!info.dli_fname || !realpath(info.dli_fname, path)) {
                ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
                path[n > 0 ? n : 0] = 0;
            }
            struct rec *r = rec_begin(0);
            if (r) {
                mods[nmods].base = base;
                char *ext = strstr(path, "/mpi4py/MPI.");
                if (ext && !py.pkg[0]) {
                    size_t n = (size_t)(ext - path) + strlen("/mpi4py/");
                    memcpy(py.pkg, path, n);
                    py.pkg[n] = 0;
                }
                mods[nmods].pyext = ext != NULL;
                id = ++nmods;
                r->type = R_MODULE; r->module = id; r->pc = base; r->path = path;
                rec_commit(r);
            }
        }
    }
    pccache[h].pc = pc; pccache[h].mod = id;
    if (id && mods[id - 1].pyext) {
        uint32_t p = py_module(); /* 0 outside Python code (mpi4py's atexit Finalize) */
        if (p) return p;
    }
    return id;
}

/* ---- communicators ---- */
struct comm {
    MPI_Comm h;
    int id, size, children;
    int *world; /* world rank of each rank of the communicator; NULL for the world */
    /* An intercommunicator (MPI-3.1 sec. 6.6): the ranks its point-to-point
     * calls name (dest, source, MPI_SOURCE) are ranks of the remote group
     * (size rsize, world ranks remote); size and world stay the local group. */
    int inter, rsize;
    int *remote;
};
static struct comm **comms;
static int ncomms, capcomms;

static uint32_t mix32(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return (uint32_t)x;
}
static int comm_id_of(int parent, int counter, int color) {
    uint32_t v = mix32(((uint64_t)(uint32_t)parent << 32) ^ ((uint64_t)(uint32_t)counter << 16) ^ (uint64_t)(uint32_t)color * 0x9e3779b97f4a7c15ULL);
    v &= 0x7fffffff;
    return v ? (int)v : 1;
}

/* group_world is the world rank of each of the n ranks of group g. */
static int *group_world(MPI_Group g, int n) {
    MPI_Group wg;
    int *in = malloc(sizeof(int) * (n ? n : 1)), *out = malloc(sizeof(int) * (n ? n : 1));
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < n; i++) in[i] = i;
    PMPI_Group_translate_ranks(g, n, in, wg, out);
    PMPI_Group_free(&wg);
    free(in);
    return out;
}

static uint64_t fnv_ranks(uint64_t x, const int *w, int n) {
    for (int i = 0; i < n; i++) x = (x ^ (uint32_t)(w ? w[i] : i)) * 0x100000001b3ULL;
    return x;
}
static int min_rank(const int *w, int n) {
    int m = INT_MAX;
    for (int i = 0; i < n; i++)
        if (w[i] < m) m = w[i];
    return m;
}

/* comm_add registers communicator h with its id (-1: derive it) and
 * writes its record: its members' world ranks, and the call that made it at
 * pc (C_NONE, 0: not known). Lock held. */
static struct comm *comm_add(MPI_Comm h, int id, int parent, int call, uintptr_t pc) {
    struct comm *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->h = h; c->id = id;
    PMPI_Comm_size(h, &c->size);
    if (h != MPI_COMM_WORLD) {
        MPI_Group g;
        PMPI_Comm_group(h, &g);
        c->world = group_world(g, c->size);
        PMPI_Group_free(&g);
        if (PMPI_Comm_test_inter(h, &c->inter) != MPI_SUCCESS) c->inter = 0;
        if (c->inter) {
            PMPI_Comm_remote_size(h, &c->rsize);
            PMPI_Comm_remote_group(h, &g);
            c->remote = group_world(g, c->rsize);
            PMPI_Group_free(&g);
        }
    }
    if (id < 0 && c->inter) {
        /* An intercommunicator the shim did not see made (MPI_Intercomm_create):
         * both sides must compute the same id, so the two groups are hashed
         * in an order independent of the side, the group holding the lower
         * world rank first, with a separator no world rank equals and a tag
         * of its own (-4), so that it never equals an intracommunicator's. */
        int mine = min_rank(c->world, c->size) < min_rank(c->remote, c->rsize);
        uint64_t x = 0xcbf29ce484222325ULL;
        x = fnv_ranks(x, mine ? c->world : c->remote, mine ? c->size : c->rsize);
        x = (x ^ 0xffffffffu) * 0x100000001b3ULL;
        x = fnv_ranks(x, mine ? c->remote : c->world, mine ? c->rsize : c->size);
        c->id = id = comm_id_of((int)mix32(x), 0, -4);
    } else if (id < 0) { /* made by a call the shim does not intercept: an id from its world ranks */
        uint64_t x = fnv_ranks(0xcbf29ce484222325ULL, c->world, c->size);
        c->id = id = comm_id_of((int)mix32(x), 0, -3);
    }
    if (ncomms == capcomms) {
        capcomms = capcomms ? capcomms * 2 : 16;
        comms = realloc(comms, sizeof *comms * capcomms);
    }
    comms[ncomms++] = c;
    struct rec *r = rec_begin(c->size);
    if (r) {
        r->type = R_COMM; r->comm = id; r->peer = parent; r->count = c->size; r->nreqs = c->size;
        r->call = call; r->pc = pc; r->module = pc ? module_of(pc) : 0;
        for (int i = 0; i < c->size; i++) r->reqs[i] = c->world ? (uint64_t)(int64_t)c->world[i] : (uint64_t)i;
        rec_commit(r);
    }
    return c;
}

/* comm_get finds the communicator; one created by a call the shim does not
 * intercept gets an id derived from its world ranks. Lock held. */
static struct comm *comm_get(MPI_Comm h) {
    if (h == MPI_COMM_NULL) return NULL;
    if (ncomms > 0 && comms[0]->h == h) return comms[0];
    for (int i = ncomms - 1; i > 0; i--)
        if (comms[i]->h == h) return comms[i];
    int sz = 0, rc;
    quiet++; /* an invalid handle: the program's own call reports it */
    rc = PMPI_Comm_size(h, &sz);
    quiet--;
    if (rc != MPI_SUCCESS) return NULL;
    return comm_add(h, -1, -1, C_NONE, 0);
}

/* comm_made registers *newcomm, which the untraced call made at pc, unless
 * it is null or known: its record names the call. Lock not held. */
static void comm_made(int call, uintptr_t pc, int rc, MPI_Comm *newcomm) {
    if (rc != MPI_SUCCESS || !newcomm || *newcomm == MPI_COMM_NULL) return;
    lock();
    int known = 0;
    for (int i = 0; i < ncomms && !known; i++) known = comms[i]->h == *newcomm;
    if (!known) comm_add(*newcomm, -1, -1, call, pc);
    unlock();
}

/* freed writes the record of the program's CALL at pc that freed the
 * object id (R_FREE). Lock not held. */
static void freed(int call, uintptr_t pc, int id) {
    lock();
    struct rec *r = rec_begin(0);
    if (r) {
        r->type = R_FREE; r->call = call; r->comm = id; r->pc = pc; r->module = module_of(pc); r->t0 = tnow();
        rec_commit(r);
    }
    unlock();
}

/* ---- forced matches (p2ptrace check's re-runs) ----
 * P2PTRACE_FORCE_MATCH="RANK:N=SRC": rank RANK's N-th call from
 * MPI_ANY_SOURCE (0-based, counting MPI_Recv, MPI_Irecv, MPI_Sendrecv's
 * receive, each MPI_Start of a persistent receive, MPI_Probe, and each
 * MPI_Iprobe that found a message: the trace's Recv, Irecv, Probe and
 * successful Iprobe ops from any rank, recorder/rerun.go's anySourceOrdinal)
 * is made a call from world rank SRC: the program runs as if SRC's message
 * had come first. A pinned probe answers with SRC's message (MPI sec. 3.8: the
 * receive the program then makes with the status's source and tag takes
 * it); a pinned MPI_Iprobe answers "no" until SRC's message is there and
 * counts once it found it. What is recorded is the call as the program
 * made it. A persistent request's source cannot change:
 * its forced start posts a nonblocking receive from SRC instead (same
 * buffer, type, tag and communicator), which stands in for the request in
 * the Wait/Test calls and MPI_Request_free that name it (start_forced). */
static long force_rank = -1, force_nth = -1, force_src = -1, any_seen;

static void force_init(void) {
    const char *f = getenv("P2PTRACE_FORCE_MATCH");
    if (f && sscanf(f, "%ld:%ld=%ld", &force_rank, &force_nth, &force_src) != 3) force_rank = -1;
}

/* pinned_source is the source the next counted call from source passes to
 * MPI (lock held): SRC, in comm's ranks, for the pinned one. It counts
 * nothing (see source_of, any_found). */
static int pinned_source(int source, MPI_Comm comm) {
    if (source != MPI_ANY_SOURCE || force_rank != world_rank || any_seen != force_nth) return source;
    struct comm *c = comm_get(comm);
    if (!c) return source;
    /* the sources comm's receives name: the remote group of an intercommunicator */
    const int *w = c->inter ? c->remote : c->world;
    int n = c->inter ? c->rsize : c->size;
    for (int i = 0; i < n; i++)
        if ((w ? w[i] : i) == force_src) return i;
    return source;
}

/* any_found counts a call from source that counts (lock held). */
static void any_found(int source) {
    if (source == MPI_ANY_SOURCE && force_rank == world_rank) any_seen++;
}

/* source_of is the source a receive or MPI_Probe from source passes to MPI
 * (lock held): each one from MPI_ANY_SOURCE counts. */
static int source_of(int source, MPI_Comm comm) {
    int src = pinned_source(source, comm);
    any_found(source);
    return src;
}

static inline int xlate(struct comm *c, int r) {
    if (r == MPI_ANY_SOURCE) return -1;
    if (r == MPI_PROC_NULL) return -2;
    if (c && c->inter) return r < 0 || r >= c->rsize ? r : c->remote[r]; /* a rank of the remote group */
    if (!c || !c->world || r < 0 || r >= c->size) return r;
    return c->world[r];
}

/* inter says whether comm is an intercommunicator: its collectives (roots
 * MPI_ROOT and MPI_PROC_NULL, two groups) are passed through unrecorded. */
static int inter(MPI_Comm comm) {
    int flag = 0;
    quiet++;
    if (PMPI_Comm_test_inter(comm, &flag) != MPI_SUCCESS) flag = 0;
    quiet--;
    return flag;
}

/* ---- requests ----
 * Handles are not unique: Open MPI returns one shared, already complete
 * request (ompi_request_empty) for every Isend it completed inline. So the
 * table is a multimap (linear probing, duplicates allowed). Each entry also
 * remembers the address of the variable the handle was written to; a lookup
 * prefers the entry whose variable is the slot the program passes back
 * (r[i] of Isend(..., &r[i]) and Waitall(n, r)), then the oldest, and never
 * the same entry twice within one call (mark). */
struct req {
    MPI_Request h;
    MPI_Request *addr;
    uint64_t id;
    uint32_t seq, mark;
    uint8_t op, dtype, persistent, active, owned;
    uint8_t cancel;      /* MPI_Cancel named it since it was started: its completion says whether that took */
    uint8_t has_forced;  /* a forced persistent receive: forced stands in for the request (start_forced) */
    MPI_Request forced;
    uint64_t pid; /* a persistent request's id (its init record's req) */
    int64_t mult; /* basic elements per element of dt (see signature) */
    const void *buf;
    int count, peer, tag;
    MPI_Datatype dt;
    struct comm *comm;
    uint64_t hash;
};
static struct req *rtab;
static size_t rcap, rlen;
static uint32_t epoch;

static inline size_t rslot(MPI_Request h) {
    uint64_t x = (uint64_t)(uintptr_t)h;
    x ^= x >> 29; x *= 0xbf58476d1ce4e5b9ULL; x ^= x >> 32;
    return (size_t)x & (rcap - 1);
}
/* req_pick finds the entry of handle h passed in variable addr (see above)
 * and marks it for this call's epoch. */
static struct req *req_pick(MPI_Request h, MPI_Request *addr) {
    if (!rcap || h == MPI_REQUEST_NULL) return NULL;
    struct req *best = NULL;
    for (size_t i = rslot(h); rtab[i].h != MPI_REQUEST_NULL; i = (i + 1) & (rcap - 1)) {
        struct req *e = &rtab[i];
        if (e->h != h || e->mark == epoch) continue;
        if (e->addr == addr) { best = e; break; }
        if (!best || e->id < best->id) best = e;
    }
    if (best) best->mark = epoch;
    return best;
}
/* req_find_id finds the entry of handle h with request id (or persistent id 0). */
static struct req *req_find_id(MPI_Request h, uint64_t id) {
    if (!rcap || h == MPI_REQUEST_NULL) return NULL;
    for (size_t i = rslot(h); rtab[i].h != MPI_REQUEST_NULL; i = (i + 1) & (rcap - 1))
        if (rtab[i].h == h && rtab[i].id == id) return &rtab[i];
    return NULL;
}
static struct req *req_insert(MPI_Request h);
static void req_grow(void) {
    struct req *old = rtab;
    size_t oc = rcap;
    rcap = rcap ? rcap * 2 : 256;
    rtab = calloc(rcap, sizeof *rtab);
    for (size_t i = 0; i < rcap; i++) rtab[i].h = MPI_REQUEST_NULL;
    rlen = 0;
    for (size_t i = 0; i < oc; i++)
        if (old[i].h != MPI_REQUEST_NULL) *req_insert(old[i].h) = old[i];
    free(old);
}
static struct req *req_insert(MPI_Request h) {
    if ((rlen + 1) * 2 > rcap) req_grow();
    size_t i = rslot(h);
    while (rtab[i].h != MPI_REQUEST_NULL) i = (i + 1) & (rcap - 1);
    rlen++;
    memset(&rtab[i], 0, sizeof rtab[i]);
    rtab[i].h = h;
    return &rtab[i];
}
/* req_del removes e with backward-shift deletion (linear probing, no tombstones). */
static void req_del(struct req *e) {
    size_t i = (size_t)(e - rtab);
    drop_type(&e->dt, &e->owned);
    rtab[i].h = MPI_REQUEST_NULL;
    rlen--;
    for (size_t j = (i + 1) & (rcap - 1); rtab[j].h != MPI_REQUEST_NULL; j = (j + 1) & (rcap - 1)) {
        size_t k = rslot(rtab[j].h);
        /* move j to i when k is cyclically outside (i, j] */
        if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
            rtab[i] = rtab[j];
            rtab[j].h = MPI_REQUEST_NULL;
            i = j;
        }
    }
}
/* req_new adds the entry of a new request written to *addr; an entry of the
 * same handle and variable is a request the program dropped: replaced. */
static struct req *req_new(MPI_Request h, MPI_Request *addr) {
    if (rcap) {
        for (size_t i = rslot(h); rtab[i].h != MPI_REQUEST_NULL; i = (i + 1) & (rcap - 1))
            if (rtab[i].h == h && rtab[i].addr == addr && !rtab[i].persistent) { req_del(&rtab[i]); break; }
    }
    struct req *e = req_insert(h);
    e->addr = addr;
    return e;
}

/* ---- receive buffers written while their receive is pending ----
 * A pending receive's buffer belongs to the MPI library until the request
 * completes. Open MPI (without a progress thread) writes receive buffers only
 * inside MPI calls, when it progresses: so a buffer that changed between the
 * return of one MPI call of the rank and the entry of its next one was
 * written by the program. The shim hashes each watched buffer (a pending
 * Irecv, or persistent receive after MPI_Start, whose buffer is one dense
 * range) when the posting call returns and at the exit of every later
 * recorded call (re-baseline: the library may have delivered into it), and
 * compares at the entry of every recorded call; a difference is written as a
 * write record (R_WRITE) naming the receive's post and the call that noticed
 * it, and the buffer is no longer watched (reported once).
 *
 * Calls the shim does not record (collectives...) progress too,
 * and may deliver into a pending buffer: Open MPI's progress engine calls
 * progress_seen (registered with opal_progress_register) on every progress
 * loop; one outside a recorded call (depth 0) marks the baseline stale, and
 * the next recorded call re-baselines without judging. Without that hook (an
 * MPI library other than Open MPI) or with hashing off, nothing is watched;
 * once a second thread makes a recorded call, nothing more is (the library
 * may then write a buffer inside that thread's call: watch_thread).
 *
 * Cost, only while receives are pending: a buffer up to WATCH_FULL bytes is
 * hashed whole; a larger one by its first WATCH_HEAD bytes and
 * WATCH_SAMPLES windows of WATCH_WINDOW bytes spread over the rest (a write
 * elsewhere is not seen); at most WATCH_MAX receives are watched at once (the
 * others are not). Two hashes per recorded call per watched buffer: about
 * 1-2.5 us per call with one pending receive of 2 KiB or more (an MPI_Iprobe
 * loop: 0.3 us a call without, on the 2-core VM). */
#define WATCH_FULL 2048
#define WATCH_HEAD 1024
#define WATCH_SAMPLES 32
#define WATCH_WINDOW 32
#define WATCH_MAX 64
/* (A Get's origin buffer is watched as a pending receive's is, with id =
 * WATCH_RMA | the access's ordinal, and the result buffer of an
 * accumulate that fetches with WATCH_RESULT too: see rma_access.) */
struct watch { uint64_t id, hash; uint32_t seq; const unsigned char *buf; size_t len; };
#define WATCH_RMA (1ULL << 63)
#define WATCH_RESULT (1ULL << 62)
static struct watch watches[WATCH_MAX];
static int nwatch, watch_on, unseen;

static uint64_t watch_hash(const unsigned char *b, size_t len) {
    struct xxh s;
    reading++;
    xxh_init(&s);
    if (len <= WATCH_FULL) {
        xxh_update(&s, b, len);
    } else {
        xxh_update(&s, b, WATCH_HEAD);
        size_t step = (len - WATCH_HEAD) / WATCH_SAMPLES;
        for (size_t i = WATCH_HEAD; i + WATCH_WINDOW <= len; i += step) xxh_update(&s, b + i, WATCH_WINDOW);
    }
    reading--;
    return xxh_digest(&s);
}
/* progress_seen is Open MPI's progress callback: progress outside the
 * recorded calls (depth 0) makes the watched hashes stale. */
static int progress_seen(void) {
    if (!depth) __atomic_store_n(&unseen, 1, __ATOMIC_RELAXED);
    return 0;
}
/* The thread that initialized MPI: the watch holds while only it makes
 * recorded calls (watch_thread). */
static pthread_t watch_owner;
static void watch_init(void) {
    int (*reg)(int (*)(void)) = NULL;
    *(void **)&reg = dlsym(RTLD_DEFAULT, "opal_progress_register");
    if (!reg || hash_mode == HASH_OFF) return;
    watch_owner = pthread_self();
    watch_on = reg(progress_seen) == 0;
}
static void watch_stop(void) {
    int (*unreg)(int (*)(void)) = NULL;
    if (!watch_on) return;
    *(void **)&unreg = dlsym(RTLD_DEFAULT, "opal_progress_unregister");
    if (unreg) unreg(progress_seen);
    watch_on = 0;
    nwatch = 0;
}
/* watch_add watches the buffer of receive id (post seq) from now on. Lock held. */
static void watch_add(uint64_t id, uint32_t seq, uint64_t addr, int64_t span) {
    if (!watch_on || !addr || span <= 0 || nwatch == WATCH_MAX) return;
    struct watch *w = &watches[nwatch++];
    w->id = id; w->seq = seq; w->buf = (const unsigned char *)(uintptr_t)addr; w->len = (size_t)span;
    w->hash = watch_hash(w->buf, w->len);
}
/* watch_del stops watching receive id (it completed or was freed). Lock held. */
static void watch_del(uint64_t id) {
    for (int i = 0; i < nwatch; i++)
        if (watches[i].id == id) { watches[i] = watches[--nwatch]; return; }
}
/* watch_rebase takes the watched buffers as they are now: at the exit of a
 * recorded call (the library may have written them). Lock held. */
static void watch_rebase(void) {
    for (int i = 0; i < nwatch; i++) watches[i].hash = watch_hash(watches[i].buf, watches[i].len);
    __atomic_store_n(&unseen, 0, __ATOMIC_RELAXED);
}
/* watch_thread stops the watch when a thread other than the one that
 * initialized MPI makes a recorded call: the library may then progress, and
 * write a pending receive's buffer, inside another thread's call while this
 * one runs its own code, which the watch would take for the program's
 * write. So under MPI_THREAD_MULTIPLE (mpi4py asks for it by default) the
 * buffers are watched as long as one thread calls MPI, as with any other
 * level. Lock held. */
static inline void watch_thread(void) {
    if (watch_on && !pthread_equal(pthread_self(), watch_owner)) watch_stop();
}
/* watch_check, at the entry of recorded call `call`, records each watched
 * buffer the program wrote since the last recorded call returned. Lock held. */
static void watch_check(int call, uintptr_t pc, uint32_t mod) {
    if (!nwatch) return;
    if (__atomic_load_n(&unseen, __ATOMIC_RELAXED)) { watch_rebase(); return; } /* a call the shim did not see progressed */
    for (int i = 0; i < nwatch;) {
        struct watch *w = &watches[i];
        if (watch_hash(w->buf, w->len) == w->hash) { i++; continue; }
        struct rec *r = rec_begin(0);
        if (r && (w->id & WATCH_RMA)) {
            r->type = R_RMA; r->op = RMA_WRITTEN; r->call = call; r->req = w->id & ~(WATCH_RMA | WATCH_RESULT);
            r->flag = (w->id & WATCH_RESULT) != 0; /* the result buffer, not the origin buffer */
            r->pc = pc; r->module = mod;
            rec_commit(r);
        } else if (r) {
            r->type = R_WRITE; r->call = call; r->seq = w->seq; r->req = w->id; r->pc = pc; r->module = mod; rec_commit(r);
        }
        *w = watches[--nwatch];
    }
}

/* watch_exit re-baselines at the exit of a recorded call. Lock held. */
static inline void watch_exit(void) {
    if (nwatch) watch_rebase();
}

/* ---- buffers released while in use ----
 * A pending nonblocking operation's buffer, and a window's memory, belong
 * to the library until the operation completes (MPI-3.1 sec. 3.7.2) or the
 * window is freed: memory the program releases before then is memory the
 * library reads for a send, writes for a receive or an access, after its
 * owner is gone. The shim notes each such buffer that lies in the calling
 * thread's stack (live frames lie between the caller's stack pointer, the
 * wrapper's canonical frame address, and the stack's top), or that starts
 * a heap block it noted (malloc...). A stack buffer is released
 * when a recorded call of the same thread is made from a frame above it
 * (the frame that held it returned); a heap one when free() releases its
 * block. The recorded call that sees it (enter_call) writes a write record
 * (R_WRITE, op WRITE_FRAME or WRITE_FREED) naming the post, or an RMA
 * record (RMA_RELEASED) naming the window (flag: freed; pc: free()'s
 * caller then, else the call's), and the buffer is forgotten
 * (reported once). At most REL_MAX buffers are noted at once. free() looks
 * only while buffers are noted, and only when it gets the lock (the shim's
 * own frees, under it, are not the program's). */
#define REL_MAX 64
#define REL_WIN (1ULL << 63) /* id of a window's memory: REL_WIN | the window's id */
enum { WRITE_PROGRAM = 0, WRITE_FRAME, WRITE_FREED };
struct relbuf {
    uint64_t id;
    uint32_t seq;
    uintptr_t lo, block;       /* the buffer's first byte; the heap block it starts (0: a stack buffer) */
    uintptr_t stack_lo, stack_hi; /* a stack buffer's stack */
    uintptr_t freed_pc;        /* set by free() (atomic): where the program freed the block */
};
static struct relbuf rels[REL_MAX];
static int nrel;
/* call_cfa is the canonical frame address of the wrapper of the current
 * call: the caller's stack pointer before the call (PC sets it). */
static __thread uintptr_t call_cfa;
static __thread uintptr_t thr_stack_lo, thr_stack_hi; /* this thread's stack, once known */
static __thread int thr_stack_known;
static void thread_stack(void) {
    if (thr_stack_known) return;
    thr_stack_known = 1;
    pthread_attr_t a;
    void *lo = NULL;
    size_t n = 0;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return;
    if (pthread_attr_getstack(&a, &lo, &n) == 0 && lo && n) {
        thr_stack_lo = (uintptr_t)lo;
        thr_stack_hi = (uintptr_t)lo + n;
    }
    pthread_attr_destroy(&a);
}
/* rel_add notes the buffer at addr of request id (post seq), or of window
 * id | REL_WIN, if it is a live stack buffer or starts a heap block. Lock held. */
static void rel_add(uint64_t id, uint32_t seq, uint64_t addr) {
    if (!addr || nrel == REL_MAX) return;
    uintptr_t a = (uintptr_t)addr, block = 0;
    thread_stack();
    /* (A stack buffer below the caller's frame, call_cfa, is dead already:
     * a persistent request started after the function that made it
     * returned. The next call of the thread reports it.) */
    int stack = call_cfa && thr_stack_hi && a >= thr_stack_lo && a < thr_stack_hi;
    if (!stack) {
        if (heap_block(addr) <= 0) return;
        block = a;
    }
    struct relbuf *b = &rels[nrel];
    b->id = id; b->seq = seq; b->lo = a; b->block = block;
    b->stack_lo = thr_stack_lo; b->stack_hi = thr_stack_hi;
    __atomic_store_n(&b->freed_pc, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&nrel, nrel + 1, __ATOMIC_RELEASE);
}
/* rel_del forgets the buffers of request or window id (a nonblocking
 * collective's request has two). Lock held. */
static void rel_del(uint64_t id) {
    for (int i = 0; i < nrel;) {
        if (rels[i].id != id) { i++; continue; }
        rels[i] = rels[nrel - 1];
        __atomic_store_n(&nrel, nrel - 1, __ATOMIC_RELEASE);
    }
}
/* rel_freed, in free(), marks the noted heap buffers that block p starts. */
static void rel_freed(void *p, uintptr_t pc) {
    if (!__atomic_load_n(&nrel, __ATOMIC_ACQUIRE) || pthread_mutex_trylock(&mu) != 0) return;
    for (int i = 0; i < nrel; i++)
        if (rels[i].block == (uintptr_t)p && !rels[i].freed_pc) __atomic_store_n(&rels[i].freed_pc, pc, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&mu);
}
/* rel_check, at the entry of recorded call `call` at pc, records each noted
 * buffer released since. Lock held. */
static void rel_check(int call, uintptr_t pc, uint32_t mod) {
    if (!nrel) return;
    uintptr_t cfa = call_cfa;
    for (int i = 0; i < nrel;) {
        struct relbuf *b = &rels[i];
        uintptr_t fpc = __atomic_load_n(&b->freed_pc, __ATOMIC_RELAXED);
        int frame = !b->block && cfa && cfa >= b->stack_lo && cfa < b->stack_hi && b->lo < cfa;
        if (!fpc && !frame) { i++; continue; }
        struct rec *r = rec_begin(0);
        if (r) {
            if (b->id & REL_WIN) {
                r->type = R_RMA; r->op = RMA_RELEASED; r->comm = (int32_t)(b->id & ~REL_WIN);
            } else {
                r->type = R_WRITE; r->op = fpc ? WRITE_FREED : WRITE_FRAME; r->seq = b->seq; r->req = b->id;
            }
            r->flag = fpc != 0;
            r->call = call; /* the call that saw it */
            /* where: the free() call, or the call made from above the frame */
            r->pc = fpc ? fpc : pc; r->module = fpc ? module_of(fpc) : mod;
            rec_commit(r);
        }
        *b = rels[--nrel];
    }
}

/* ---- records ---- */
static inline void enter_call(int call, uintptr_t pc, uint32_t mod) {
    watch_thread();
    watch_check(call, pc, mod);
    rel_check(call, pc, mod);
    hdr->cur_call = call;
    hdr->cur_pc = pc;
    hdr->cur_module = mod;
}
static inline void set_state(uint32_t s) { __atomic_store_n(&hdr->state, s, __ATOMIC_RELEASE); }
static inline void count_call(void) { __atomic_fetch_add(&hdr->calls, 1, __ATOMIC_RELAXED); }

/* note_poll records the outcome of a poll (under the lock, after the call):
   a fruitless one extends the run of them that ends at the last call. */
static void note_poll(int found) {
    uint64_t n = __atomic_load_n(&hdr->calls, __ATOMIC_RELAXED);
    if (found) { __atomic_store_n(&hdr->poll_to, 0, __ATOMIC_RELEASE); return; }
    if (hdr->poll_to == 0 || hdr->poll_to + 1 != n) hdr->poll_from = n;
    __atomic_store_n(&hdr->poll_to, n, __ATOMIC_RELEASE);
}

/* ---- runs of fruitless polls ----
 * A program that polls in a tight loop (while (!flag) MPI_Test(...)) makes
 * a million calls a second or more: recording each grew the segment by
 * hundreds of MB a second (and the trace and its merge with it) for calls
 * that changed nothing. A fruitless poll that repeats the rank's previous
 * call (the same call at the same pc on the same requests or envelope, key,
 * with no other call between) extends a run, of which only the 1st, 2nd,
 * 4th, 8th... polls are recorded: about log2(n) records for n polls. Each
 * still counts as a call and a poll for the hang monitor (note_poll), and
 * the poll that ends a run by finding something is always recorded. A
 * replay loses nothing it uses: it parks a rank after sim.DefaultPollLimit
 * fruitless polls whatever their number, and the merge turns the time
 * between two recorded polls into a compute op, which polls too. */
static struct { uint64_t calls, key, n; uintptr_t pc; int call; } prun;
/* poll_thinned reports whether this fruitless poll (call at pc on key, the
 * call numbered hdr->calls) is one of a run that is not recorded. Lock held. */
static int poll_thinned(int call, uintptr_t pc, uint64_t key) {
    uint64_t n = __atomic_load_n(&hdr->calls, __ATOMIC_RELAXED);
    if (prun.call == call && prun.pc == pc && prun.key == key && prun.calls + 1 == n) {
        prun.calls = n;
        prun.n++;
        return (prun.n & (prun.n - 1)) != 0; /* recorded when n is a power of two */
    }
    prun.call = call; prun.pc = pc; prun.key = key; prun.calls = n; prun.n = 1;
    return 0;
}
/* key_of mixes ids into a poll's key. */
static uint64_t key_of(const uint64_t *ids, int n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < n; i++) { h ^= ids[i]; h *= 0x100000001b3ULL; }
    return h;
}

/* enter_nonblocking counts a call that does not block and notes it as the
   call the rank is in (a hang report names the last one), then leaves the
   lock and enters the MPI library (depth). It returns the call's module. */
static uint32_t enter_nonblocking(int call, uintptr_t pc) {
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    enter_call(call, pc, mod);
    unlock();
    depth++;
    return mod;
}

static struct rec *post(int call, int op, uintptr_t pc, uint32_t mod, uint64_t t0, size_t nreqs) {
    struct rec *r = rec_begin(nreqs);
    if (!r) return NULL;
    r->type = R_POST; r->call = call; r->op = op; r->seq = next_seq++;
    r->pc = pc; r->module = mod; r->t0 = t0; r->nreqs = (uint32_t)nreqs;
    r->frame = call_fp;
    return r;
}
static struct rec *done(int call, uint32_t seq, size_t nreqs) {
    struct rec *r = rec_begin(nreqs);
    if (!r) return NULL;
    r->type = R_DONE; r->call = call; r->seq = seq; r->t1 = tnow(); r->nreqs = (uint32_t)nreqs;
    r->source = -1; r->stag = -1;
    return r;
}
static inline uint64_t *rec_reqs(struct rec *r) { return r->reqs; }

/* sig_buf holds the signature of the record being built (lock held). */
static struct run sig_buf[SIG_RUNS];

/* set_dtype records dt in r: a basic type as its code; a derived type
 * whose signature is one basic type repeated as that type (*n of them per
 * element of dt); any other as opaque. Returns the number of runs of dt's
 * signature in sig_buf (0 for a basic type, -1 when not flattened). */
static int set_dtype(struct rec *r, MPI_Datatype dt, int64_t *n) {
    if (dt == MPI_PACKED) {
        /* MPI_PACKED matches any type signature, at either end (MPI-3.1
         * sec. 4.2: packed data may be received as any matching type, and
         * any message as MPI_PACKED): recorded as no type, never compared. */
        r->dtype = DT_NONE;
        return -1;
    }
    r->dtype = dtype_code(dt);
    if (r->dtype != DT_OPAQUE || dt == MPI_DATATYPE_NULL) return r->dtype == DT_OPAQUE ? -1 : 0;
    int k = signature(dt, sig_buf, SIG_RUNS, 0);
    if (k == 1) { /* one basic type repeated: recorded as that type */
        r->dtype = sig_buf[0].dt;
        *n = sig_buf[0].n;
    }
    return k;
}

/* set_envelope fills the envelope of a message op. A derived datatype whose
 * signature is one basic type repeated is recorded as that type, with the
 * count in basic elements (see signature); the buffer's address range when
 * it is dense (see dense_span). Returns the basic elements per element. */
static int64_t set_envelope(struct rec *r, struct comm *c, const void *buf, int peer, int tag, int count, MPI_Datatype dt) {
    int ts = 0;
    int64_t n = 1;
    r->peer = xlate(c, peer);
    r->tag = tag == MPI_ANY_TAG ? -1 : tag;
    r->comm = c ? c->id : -1;
    int k = set_dtype(r, dt, &n);
    if (k > 1) { /* mixed: opaque, with its signature */
        r->sig = sig_buf;
        r->nsig = (uint32_t)k;
    }
    r->count = (int64_t)count * n;
    if (dt != MPI_DATATYPE_NULL) {
        quiet++;
        PMPI_Type_size(dt, &ts);
        quiet--;
    }
    r->bytes = (int64_t)count * ts;
    dense_span(buf, count, dt, ts, &r->addr, &r->span);
    r->ctype = ctype_of(dt);
    return n;
}

/* complete_status fills the outcome of a receive from st; mult is the
 * basic elements per element of dt that its post recorded (set_envelope). */
static void complete_status(struct rec *r, struct comm *c, MPI_Status *st, const void *buf, MPI_Datatype dt, int recv, int64_t mult) {
    int n = 0;
    r->source = xlate(c, st->MPI_SOURCE);
    r->stag = st->MPI_TAG == MPI_ANY_TAG ? -1 : st->MPI_TAG;
    if (recv && dt != MPI_DATATYPE_NULL) {
        quiet++;
        PMPI_Get_count(st, dt, &n);
        quiet--;
        if (n == MPI_UNDEFINED) n = 0;
        r->scount = (int64_t)n * mult;
        if (mult != 1) { /* count in basic elements, as the post's */
            int b = 0;
            quiet++;
            if (PMPI_Get_elements(st, dt, &b) == MPI_SUCCESS && b != MPI_UNDEFINED) r->scount = b;
            quiet--;
        }
        if (st->MPI_SOURCE != MPI_PROC_NULL) r->hash = hash_data(buf, n, dt);
    }
}

/* PC is the calling site (the return address), and notes call_fp; used
 * in the wrappers themselves, never in a function they call. (A function
 * that takes __builtin_frame_address(0) keeps a frame pointer: the saved
 * one there is its caller's.) */
#define PC() (call_fp = *(const uintptr_t *)__builtin_frame_address(0), call_cfa = (uintptr_t)__builtin_dwarf_cfa(), \
              (uintptr_t)__builtin_return_address(0))
/* PASS: the call goes straight to the library: the shim is not recording
 * (not started, finalized: outside_call notes such a call), or the call
 * is the library's own, inside a recorded one. */
static int outside_call(const char *fn, uintptr_t pc);
#define PASS (!active ? outside_call(__func__, (uintptr_t)__builtin_return_address(0)) : depth)

/* ---- init / finalize / errors ---- */
/* mpi_library says whether a loaded object is part of the MPI library. */
static int mpi_library(const char *path) {
    return path && (strstr(path, "libmpi") || strstr(path, "libopen-") || strstr(path, "/openmpi/") ||
                    strstr(path, "mca_") || strstr(path, "libpmpi"));
}

/* failed_call finds, for an error raised outside the recorded calls, the
 * return address into the program of the MPI call that failed (the first
 * frame past the MPI library's) and, when its frame is on the stack (not
 * left by a tail call), the MPI function's name (PMPI_ prefix dropped).
 * Lock held. */
static void failed_call(void) {
    void *bt[48];
    Dl_info self, di;
    int n = backtrace(bt, 48), in_mpi = 0;
    const char *name = NULL;
    if (!dladdr((void *)failed_call, &self)) return;
    for (int i = 1; i < n; i++) {
        if (!dladdr(bt[i], &di)) continue;
        if (di.dli_fbase == self.dli_fbase) continue; /* the shim */
        if (mpi_library(di.dli_fname)) {
            in_mpi = 1;
            if (di.dli_sname && (strncmp(di.dli_sname, "MPI_", 4) == 0 || strncmp(di.dli_sname, "PMPI_", 5) == 0)) name = di.dli_sname;
            continue;
        }
        if (!in_mpi) return;
        hdr->err_pc = (uint64_t)(uintptr_t)bt[i];
        hdr->err_module = module_of((uintptr_t)bt[i]);
        if (name) snprintf(hdr->err_name, sizeof hdr->err_name, "%s", name[0] == 'P' ? name + 1 : name);
        return;
    }
}

/* err_why, set while the shim raises an error the MPI library does not
 * detect (start_refused), says what the program did: the error's text. */
static __thread const char *err_why;
/* refusing_post: the shim fails the recorded call it is in (a collective
 * with no buffer, coll_refused): refused for its argument, as the
 * library's own argument errors (rejected_class). */
static __thread int refusing_post;

/* rejected_class says whether an error class is that of a bad argument
 * (MPI-3.1 sec. 8.4, Table 8.7), raised by the argument checks at a call's
 * entry: the call did not take effect (no message was sent or received, no
 * request was started). MPI_ERR_BUFFER is left out: it is also the error of
 * a buffered send without space, after the call has begun. */
static int rejected_class(int cls) {
    switch (cls) {
    case MPI_ERR_COUNT: case MPI_ERR_TYPE: case MPI_ERR_TAG: case MPI_ERR_COMM: case MPI_ERR_RANK:
    case MPI_ERR_REQUEST: case MPI_ERR_ROOT: case MPI_ERR_GROUP: case MPI_ERR_OP: case MPI_ERR_ARG:
        return 1;
    }
    return 0;
}

static void errhandler(MPI_Comm *comm, int *code, ...) {
    if (quiet) return; /* the shim's own look-up: its caller copes, the program's call reports it */
    char text[MPI_MAX_ERROR_STRING + 160];
    int len = 0, cls = 0;
    PMPI_Error_string(*code, text, &len);
    PMPI_Error_class(*code, &cls);
    if (err_why) snprintf(text + strlen(text), sizeof text - strlen(text), " (%s)", err_why);
    lock();
    if (hdr) {
        hdr->err_class = cls;
        /* Outside a recorded call's PMPI call (depth 0) the error is a call
         * the shim does not record: no call, no site; cur_call still names
         * the last recorded one (the merge says "after"). */
        hdr->err_call = depth ? hdr->cur_call : C_NONE;
        hdr->err_pc = depth ? hdr->cur_pc : 0;
        hdr->err_module = depth ? hdr->cur_module : 0;
        hdr->err_rejected = depth && (rejected_class(cls) || refusing_post); /* (a post the shim refused took no effect) */
        if (!depth) failed_call();
        snprintf(hdr->error, sizeof hdr->error, "%s", text);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        hdr->end_unix = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        set_state(ST_ERRORED);
        /* what MPI_ERRORS_ARE_FATAL would have said, before the abort's own message */
        uint32_t c = hdr->err_call;
        fprintf(stderr, "p2ptrace: rank %d: error in %s: %s (aborting, as MPI_ERRORS_ARE_FATAL)\n", world_rank,
                c != C_NONE && c < sizeof call_names / sizeof call_names[0] && call_names[c] ? call_names[c]
                : hdr->err_name[0]                                          ? hdr->err_name
                                                                            : "an MPI call p2ptrace does not record", text);
    }
    unlock();
    PMPI_Abort(comm ? *comm : MPI_COMM_WORLD, *code ? *code : 1);
}

/* read_eager_limit reads the cvar btl_vader_eager_limit through MPI_T, 0 if
 * it is not there. MPI_T_init_thread costs a few hundred ms in Open MPI (it
 * registers every component's variables), so it runs at MPI_Finalize only;
 * at init the shim takes the value mpirun passes as OMPI_MCA_... (--mca). */
static int64_t read_eager_limit(void) {
    int prov, i = -1;
    int64_t v = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) != MPI_SUCCESS) return 0;
    if (MPI_T_cvar_get_index("btl_vader_eager_limit", &i) == MPI_SUCCESS && i >= 0) {
        char name[256], desc[1024];
        int nl = sizeof name, dl = sizeof desc, verb, bind, scope, cnt = 0, ts = 0;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_cvar_handle h;
        if (MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) == MPI_SUCCESS &&
            MPI_T_cvar_handle_alloc(i, NULL, &h, &cnt) == MPI_SUCCESS) {
            union { int i; unsigned u; long long ll; unsigned char b[64]; } val;
            memset(&val, 0, sizeof val);
            if (cnt == 1 && MPI_T_cvar_read(h, &val) == MPI_SUCCESS) {
                PMPI_Type_size(dt, &ts);
                if (dt == MPI_INT) v = val.i;
                else if (dt == MPI_UNSIGNED) v = val.u;
                else if (ts == 8) v = val.ll;
                else if (ts == 4) v = val.i;
            }
            MPI_T_cvar_handle_free(&h);
        }
    }
    MPI_T_finalize();
    return v;
}

static void catch_fatal(void);
static void exit_check(int status, void *arg);

/* seg_create makes the rank's segment and its header, without the magic
 * (seg_publish): world_rank and world_size are set. 0 on success. */
static int seg_create(const char *dir, int thread_level) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&mu, &a);
    char path[PATH_MAX];
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/rank-%d.seg", dir, world_rank);
    seg_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (seg_fd < 0) { fprintf(stderr, "p2ptrace: cannot create %s: %s\n", path, strerror(errno)); return -1; }
    seg_cap = 1u << 20;
    if (ftruncate(seg_fd, seg_cap) != 0) { close(seg_fd); return -1; }
    seg_map = mmap(NULL, seg_cap, PROT_READ | PROT_WRITE, MAP_SHARED, seg_fd, 0);
    if (seg_map == MAP_FAILED) { close(seg_fd); return -1; }
    hdr = (struct seg_hdr *)seg_map;
    seg_populate(0, seg_cap);
    memset(hdr, 0, SEG_HDR);
    hdr->version = SEG_VERSION;
    hdr->hdr_size = SEG_HDR;
    hdr->rank = world_rank;
    hdr->size = world_size;
    hdr->pid = getpid();
    hdr->thread_level = thread_level;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    mono0 = mono_now();
    hdr->start_unix = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    hdr->start_mono = mono0;
    force_init();
    const char *hm = getenv("P2PTRACE_HASH");
    if (hm && strcmp(hm, "sample") == 0) hash_mode = HASH_SAMPLE;
    else if (hm && strcmp(hm, "off") == 0) hash_mode = HASH_OFF;
    hdr->hash_mode = hash_mode;
    hdr->bsend_overhead = MPI_BSEND_OVERHEAD;
    return 0;
}
/* note_library writes the MPI library's version, its first line, in the
 * header (MPI_Get_library_version may be called before MPI_Init). */
static void note_library(void) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int ll = 0;
    if (MPI_Get_library_version(lib, &ll) == MPI_SUCCESS) {
        lib[ll < (int)sizeof lib ? ll : (int)sizeof lib - 1] = 0;
        char *nl = strchr(lib, '\n');
        if (nl) *nl = 0;
        snprintf(hdr->library, sizeof hdr->library, "%s", lib);
    }
}
/* seg_publish makes the header valid, in state st: a monitor may read it,
 * and a rank killed from then on merges as a rank without calls. */
static void seg_publish(uint32_t st) {
    set_state(st);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(hdr->magic, SEG_MAGIC, 8);
}

/* outside_call notes a call the shim wraps that is made before MPI_Init
 * or after MPI_Finalize: erroneous (MPI-3.1 sec. 8.7: only
 * MPI_GET_VERSION, MPI_GET_LIBRARY_VERSION, MPI_INITIALIZED, MPI_FINALIZED
 * and the MPI_T functions may be, none of which the shim wraps), and Open
 * MPI aborts the process in it. The rank's segment, made now before
 * MPI_Init (from the launcher's OMPI_COMM_WORLD_RANK and _SIZE), says
 * which call, where and why, as the MPI error of a call the shim does not
 * record. The first such call only; it returns 1: the call goes on to the
 * library (PASS). */
static int outside_call(const char *fn, uintptr_t pc) {
    static int noted;
    const char *dir = getenv("P2PTRACE_SEGDIR");
    if (noted || depth || !dir || !*dir) return 1;
    const char *when;
    if (!hdr) {
        const char *r = getenv("OMPI_COMM_WORLD_RANK"), *n = getenv("OMPI_COMM_WORLD_SIZE");
        if (!r || !n) return 1;
        world_rank = atoi(r);
        world_size = atoi(n);
        if (world_rank < 0 || world_size <= world_rank || seg_create(dir, MPI_THREAD_SINGLE) != 0) return 1;
        note_library();
        when = "before MPI_Init";
    } else if (hdr->pid == getpid() && __atomic_load_n(&hdr->state, __ATOMIC_ACQUIRE) == ST_FINALIZED) {
        when = "after MPI_Finalize";
    } else {
        return 1;
    }
    noted = 1;
    lock();
    hdr->err_class = MPI_ERR_OTHER;
    hdr->err_call = C_NONE;
    hdr->err_pc = pc;
    hdr->err_module = module_of(pc);
    hdr->err_rejected = 1; /* (it took no effect) */
    snprintf(hdr->err_name, sizeof hdr->err_name, "%s", fn);
    /* (the merge knows these by their start: outsideBefore, outsideAfter) */
    snprintf(hdr->error, sizeof hdr->error,
             "called %s (MPI-3.1 sec. 8.7: no MPI call but MPI_Get_version, MPI_Get_library_version, MPI_Initialized, "
             "MPI_Finalized and the MPI_T functions may be made before MPI_Init or after MPI_Finalize)", when);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    hdr->end_unix = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    unlock();
    if (memcmp(hdr->magic, SEG_MAGIC, 8) != 0) seg_publish(ST_ERRORED);
    else set_state(ST_ERRORED);
    return 1;
}

static void start(int thread_level) {
    const char *dir = getenv("P2PTRACE_SEGDIR");
    if (!dir || !*dir || hdr) return; /* (hdr: made by a call before MPI_Init, outside_call) */
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (seg_create(dir, thread_level) != 0) return;
    watch_init();
    seg_publish(ST_RUNNING);
    note_library();
    const char *el = getenv("OMPI_MCA_btl_vader_eager_limit");
    if (el && *el) hdr->eager = strtoll(el, NULL, 0);
    comm_add(MPI_COMM_WORLD, 0, -1, C_NONE, 0);
    MPI_Errhandler eh;
    if (PMPI_Comm_create_errhandler(errhandler, &eh) == MPI_SUCCESS) PMPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    catch_fatal();
    on_exit(exit_check, NULL);
    count_call();
    active = 1;
}

/* Fatal signals. A rank the kernel kills (a bad pointer handed to MPI, a
 * bug of the program's own) would merge as "ended without MPI_Finalize":
 * the handler leaves in the header which signal, at what address, and the
 * MPI call it came in (err_call; none when it came in the program's own
 * code: the merge names the last call), then puts back the handler it
 * found (Open MPI's backtrace printer, or the default) and raises the
 * signal again, so the rank dies as it would have. It writes the header
 * only, without the lock: async-signal-safe. err_class holds the signal. */
static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NFATAL (sizeof fatal_sigs / sizeof fatal_sigs[0])
static struct sigaction fatal_old[NFATAL];
/* The shim's own code, [shim_lo, shim_hi): a signal there with depth 0
 * came in the shim's work for the call it wraps (reading the program's
 * buffer to hash it), not in the program's code after it. */
static uintptr_t shim_lo, shim_hi;

static int find_shim(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    uintptr_t me = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (me >= lo && me < hi) { shim_lo = lo; shim_hi = hi; return 1; }
    }
    return 0;
}

/* signal_pc is the instruction the signal came at (0 where unknown). */
static uintptr_t signal_pc(void *uc) {
#if defined(__x86_64__)
    return uc ? (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP] : 0;
#elif defined(__aarch64__)
    return uc ? (uintptr_t)((ucontext_t *)uc)->uc_mcontext.pc : 0;
#else
    (void)uc;
    return 0;
#endif
}

/* put_text appends s to buf at *n (bounded by cap, NUL-terminated). */
static void put_text(char *buf, size_t cap, size_t *n, const char *s) {
    while (*s && *n + 1 < cap) buf[(*n)++] = *s++;
    buf[*n] = 0;
}

static void put_hex(char *buf, size_t cap, size_t *n, uintptr_t v) {
    char d[2 + 2 * sizeof v + 1];
    int i = sizeof d - 1;
    d[i] = 0;
    do { d[--i] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v && i > 2);
    d[--i] = 'x';
    d[--i] = '0';
    put_text(buf, cap, n, d + i);
}

static void fatal_signal(int sig, siginfo_t *si, void *uc) {
    uintptr_t pc = signal_pc(uc);
    int inside = depth || reading || (pc && pc >= shim_lo && pc < shim_hi);
    uint32_t st = hdr ? __atomic_load_n(&hdr->state, __ATOMIC_ACQUIRE) : 0;
    /* (After MPI_Finalize too: the rank crashed all the same, and its
     * last call, cur_call, is then MPI_Finalize. Not in a child the rank
     * forked: getpid is async-signal-safe.) */
    if (hdr && hdr->pid == getpid() && st != ST_ABORTED && st != ST_ERRORED && st != ST_SIGNALED) {
        hdr->err_class = sig;
        hdr->err_call = inside ? hdr->cur_call : C_NONE;
        hdr->err_pc = inside ? hdr->cur_pc : 0;
        hdr->err_module = inside ? hdr->cur_module : 0;
        hdr->err_rejected = 0;
        size_t n = 0;
        const char *name = sig == SIGSEGV ? "SIGSEGV (invalid memory access"
                           : sig == SIGBUS ? "SIGBUS (bus error"
                           : sig == SIGFPE ? "SIGFPE (arithmetic error"
                           : sig == SIGILL ? "SIGILL (illegal instruction"
                                           : "SIGABRT (abort";
        put_text(hdr->error, sizeof hdr->error, &n, name);
        if (sig != SIGABRT && si && si->si_code > 0) {
            put_text(hdr->error, sizeof hdr->error, &n, " at address ");
            put_hex(hdr->error, sizeof hdr->error, &n, (uintptr_t)si->si_addr);
        }
        put_text(hdr->error, sizeof hdr->error, &n, ")");
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        hdr->end_unix = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        set_state(ST_SIGNALED);
    }
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal_sigs[i] == sig) sigaction(sig, &fatal_old[i], NULL);
    raise(sig); /* (blocked until the handler returns: then the old action takes it) */
}

/* exit_check notes a rank that exits without MPI_Finalize (MPI-3.1 sec.
 * 8.7: "all processes must call MPI_FINALIZE before exiting"), returning
 * from main included: it would merge as a rank that ended without it,
 * killed or not. err_class holds its exit status; its last call stays in
 * cur_call. (mpi4py's MPI_Finalize at interpreter exit comes first.) */
static void exit_check(int status, void *arg) {
    (void)arg;
    if (!hdr || hdr->pid != getpid()) return; /* (a child the rank forked exits: not the rank) */
    uint32_t st = __atomic_load_n(&hdr->state, __ATOMIC_ACQUIRE);
    if (st != ST_RUNNING && st != ST_BLOCKED) return;
    hdr->err_class = status;
    hdr->err_call = C_NONE;
    hdr->err_pc = 0;
    hdr->err_module = 0;
    hdr->err_rejected = 0;
    snprintf(hdr->error, sizeof hdr->error, "exit status %d", status);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    hdr->end_unix = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    set_state(ST_EXITED);
}

/* catch_fatal installs fatal_signal over the handlers the MPI library
 * installed: after MPI_Init, and again after MPI_Finalize, which may put
 * back the ones it found at init. A signal whose handler is still
 * fatal_signal keeps the old handler it had. */
static void catch_fatal(void) {
    if (!shim_hi) dl_iterate_phdr(find_shim, (void *)(uintptr_t)catch_fatal);
    struct sigaction sa, cur;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fatal_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NFATAL; i++) {
        if (sigaction(fatal_sigs[i], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == fatal_signal) continue;
        sigaction(fatal_sigs[i], &sa, &fatal_old[i]);
    }
}

int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS && !active) start(MPI_THREAD_SINGLE);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS && !active) start(*provided);
    return rc;
}

int MPI_Finalize(void) {
    if (PASS) return PMPI_Finalize();
    uintptr_t pc = PC();
    if (hdr->eager == 0) {
        depth++;
        int64_t e = read_eager_limit();
        depth--;
        lock();
        hdr->eager = e;
        unlock();
    }
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    struct rec *r = post(C_FINALIZE, OP_FINALIZE, pc, mod, tnow(), 0);
    uint32_t seq = r ? r->seq : 0;
    if (r) rec_commit(r);
    enter_call(C_FINALIZE, pc, mod);
    watch_stop();
    set_state(ST_BLOCKED);
    unlock();
    depth++;
    int rc = PMPI_Finalize();
    depth--;
    lock();
    r = done(C_FINALIZE, seq, 0);
    if (r) rec_commit(r);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    hdr->end_unix = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    set_state(ST_FINALIZED);
    active = 0;
    catch_fatal();
    /* Give back the unused, prefaulted tail (nothing writes past "used" any more). */
    size_t keep = (SEG_HDR + hdr->used + 4095) & ~(size_t)4095;
    if (keep < seg_cap && ftruncate(seg_fd, keep) == 0) {
        munmap(seg_map + keep, seg_cap - keep);
        seg_cap = keep;
    }
    unlock();
    return rc;
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
    if (!active) return PMPI_Abort(comm, errorcode);
    uintptr_t pc = PC();
    lock();
    count_call();
    uint32_t mod = depth ? hdr->cur_module : module_of(pc);
    if (!depth) enter_call(C_ABORT, pc, mod);
    hdr->err_call = C_ABORT;
    hdr->err_pc = depth ? hdr->cur_pc : pc;
    hdr->err_module = mod;
    snprintf(hdr->error, sizeof hdr->error, "MPI_Abort called with error code %d", errorcode);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    hdr->end_unix = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    set_state(ST_ABORTED);
    unlock();
    return PMPI_Abort(comm, errorcode);
}

/* ---- pass-through calls that only count ---- */
int MPI_Comm_rank(MPI_Comm comm, int *rank) {
    if (!PASS) count_call();
    return PMPI_Comm_rank(comm, rank);
}
int MPI_Comm_size(MPI_Comm comm, int *size) {
    if (!PASS) count_call();
    return PMPI_Comm_size(comm, size);
}

/* ---- the buffer of buffered sends ---- */
/* MPI_Buffer_attach records a Buffer_attach op whose count and bytes are the
 * size attached; MPI_Buffer_detach a Buffer_detach op (it blocks until the
 * rank's buffered messages are transmitted), whose done's count is the size
 * handed back. The replay checks buffered sends against the space
 * (gpu/sim/bsend.go); the header's bsend_overhead says the trace records
 * them. */
int MPI_Buffer_attach(void *buf, int size) {
    if (PASS) return PMPI_Buffer_attach(buf, size);
    uintptr_t pc = PC();
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    enter_call(C_BUFFER_ATTACH, pc, mod);
    struct rec *r = post(C_BUFFER_ATTACH, OP_BUFFER_ATTACH, pc, mod, tnow(), 0);
    uint32_t seq = 0;
    int ok = r != NULL;
    if (r) { r->count = r->bytes = size; seq = r->seq; rec_commit(r); }
    unlock();
    depth++;
    int rc = PMPI_Buffer_attach(buf, size);
    depth--;
    lock();
    watch_exit();
    if (ok && (r = done(C_BUFFER_ATTACH, seq, 0))) rec_commit(r);
    unlock();
    return rc;
}
int MPI_Buffer_detach(void *buf, int *size) {
    if (PASS) return PMPI_Buffer_detach(buf, size);
    uintptr_t pc = PC();
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    enter_call(C_BUFFER_DETACH, pc, mod);
    struct rec *r = post(C_BUFFER_DETACH, OP_BUFFER_DETACH, pc, mod, tnow(), 0);
    uint32_t seq = 0;
    int ok = r != NULL;
    if (r) { seq = r->seq; rec_commit(r); }
    set_state(ST_BLOCKED);
    unlock();
    depth++;
    int rc = PMPI_Buffer_detach(buf, size);
    depth--;
    lock();
    watch_exit();
    if (ok && (r = done(C_BUFFER_DETACH, seq, 0))) rec_commit(r);
    set_state(ST_RUNNING);
    unlock();
    return rc;
}

/* ---- communicators ---- */
static int comm_create(int call, MPI_Comm parent, int color, int key, MPI_Comm *out, uintptr_t pc) {
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    struct comm *p = comm_get(parent);
    int pid = p ? p->id : -1;
    int counter = p ? ++p->children : 0;
    enter_call(call, pc, mod);
    set_state(ST_BLOCKED);
    unlock();
    depth++;
    int rc = call == C_COMM_DUP ? PMPI_Comm_dup(parent, out) : PMPI_Comm_split(parent, color, key, out);
    depth--;
    lock();
    if (rc == MPI_SUCCESS && *out != MPI_COMM_NULL)
        comm_add(*out, comm_id_of(pid, counter, call == C_COMM_DUP ? 0x7fffffff : color), pid, call, pc);
    watch_exit();
    set_state(ST_RUNNING);
    unlock();
    return rc;
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    if (PASS) return PMPI_Comm_dup(comm, newcomm);
    return comm_create(C_COMM_DUP, comm, 0, 0, newcomm, PC());
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    if (PASS) return PMPI_Comm_split(comm, color, key, newcomm);
    return comm_create(C_COMM_SPLIT, comm, color, key, newcomm, PC());
}
/* comm_freed is the body of MPI_Comm_free (call C_COMM_FREE) and
 * MPI_Comm_disconnect, called by the program at pc. */
static int comm_freed(int call, uintptr_t pc, MPI_Comm *comm) {
    if (PASS) return call == C_COMM_FREE ? PMPI_Comm_free(comm) : PMPI_Comm_disconnect(comm);
    int id = 0, found = 0;
    lock();
    count_call();
    for (int i = 1; comm && i < ncomms; i++)
        if (comms[i]->h == *comm) { /* kept: requests may still point to it */
            comms[i]->h = MPI_COMM_NULL;
            id = comms[i]->id;
            found = 1;
            break;
        }
    unlock();
    int rc = call == C_COMM_FREE ? PMPI_Comm_free(comm) : PMPI_Comm_disconnect(comm);
    if (rc == MPI_SUCCESS && found) freed(call, pc, id);
    return rc;
}
int MPI_Comm_free(MPI_Comm *comm) { return comm_freed(C_COMM_FREE, PC(), comm); }
/* MPI_Comm_disconnect frees the communicator too, once its pending
 * communication completed (MPI-3.1 sec. 10.5.4). */
int MPI_Comm_disconnect(MPI_Comm *comm) { return comm_freed(C_COMM_DISCONNECT, PC(), comm); }

/* ---- blocking calls the shim does not record (untraced) ----
 * Collectives the trace has no op for (neighbourhood collectives,
 * MPI_Alltoallw, those of intercommunicators) and the collective calls that
 * make communicators and windows. The rank is marked blocked in the call,
 * its line and all, as in a recorded one: a job that hangs there is called
 * hung, and its report names the call (the monitor saw the rank in no MPI
 * call, so the job ran until --timeout or forever), and an MPI error in it
 * names it too. Nothing is recorded: the trace holds no op for it. */
static void untraced_enter(int call, uintptr_t pc) {
    lock();
    count_call();
    enter_call(call, pc, module_of(pc));
    set_state(ST_BLOCKED);
    unlock();
    depth++;
}
static int untraced_leave(int rc) {
    depth--;
    lock();
    watch_exit();
    set_state(ST_RUNNING);
    unlock();
    return rc;
}
/* UNTRACED_AT returns PMPI_CALL's result, made as the untraced call CALL at pc. */
#define UNTRACED_AT(CALL, PC_, PMPI_CALL) do { \
        untraced_enter(CALL, PC_); \
        return untraced_leave(PMPI_CALL); \
    } while (0)
/* UNTRACED_COMM is UNTRACED of a call that makes the communicator *NEWCOMM:
 * it is registered with the call and its line (comm_made). */
#define UNTRACED_COMM(CALL, NEWCOMM, PMPI_CALL) do { \
        if (PASS) return PMPI_CALL; \
        uintptr_t pc_ = PC(); \
        untraced_enter(CALL, pc_); \
        int rc_ = untraced_leave(PMPI_CALL); \
        comm_made(CALL, pc_, rc_, NEWCOMM); \
        return rc_; \
    } while (0)
/* UNTRACED is the body of an MPI function the shim marks but does not record. */
#define UNTRACED(CALL, PMPI_CALL) do { \
        if (PASS) return PMPI_CALL; \
        UNTRACED_AT(CALL, PC(), PMPI_CALL); \
    } while (0)

int MPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm) {
    UNTRACED(C_NEIGHBOR_ALLGATHER, PMPI_Neighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}
int MPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
                            MPI_Datatype rtype, MPI_Comm comm) {
    UNTRACED(C_NEIGHBOR_ALLGATHERV, PMPI_Neighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm));
}
int MPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm) {
    UNTRACED(C_NEIGHBOR_ALLTOALL, PMPI_Neighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}
int MPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                           const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
    UNTRACED(C_NEIGHBOR_ALLTOALLV, PMPI_Neighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm));
}
int MPI_Neighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[], void *rbuf,
                           const int rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
    UNTRACED(C_NEIGHBOR_ALLTOALLW, PMPI_Neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm));
}
int MPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void *rbuf,
                  const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
    UNTRACED(C_ALLTOALLW, PMPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm));
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    UNTRACED_COMM(C_COMM_CREATE, newcomm, PMPI_Comm_create(comm, group, newcomm));
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm) {
    UNTRACED_COMM(C_COMM_SPLIT_TYPE, newcomm, PMPI_Comm_split_type(comm, type, key, info, newcomm));
}
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    UNTRACED_COMM(C_COMM_CREATE_GROUP, newcomm, PMPI_Comm_create_group(comm, group, tag, newcomm));
}
int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm peer, int remote_leader, int tag, MPI_Comm *newcomm) {
    UNTRACED_COMM(C_INTERCOMM_CREATE, newcomm, PMPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, newcomm));
}
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newcomm) {
    UNTRACED_COMM(C_INTERCOMM_MERGE, newcomm, PMPI_Intercomm_merge(intercomm, high, newcomm));
}
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *newcomm) {
    UNTRACED_COMM(C_CART_CREATE, newcomm, PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm));
}
int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *newcomm) {
    UNTRACED_COMM(C_CART_SUB, newcomm, PMPI_Cart_sub(comm, remain, newcomm));
}
int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *newcomm) {
    UNTRACED_COMM(C_GRAPH_CREATE, newcomm, PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm));
}
int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int dests[], const int weights[],
                          MPI_Info info, int reorder, MPI_Comm *newcomm) {
    UNTRACED_COMM(C_DIST_GRAPH_CREATE, newcomm, PMPI_Dist_graph_create(comm, n, sources, degrees, dests, weights, info, reorder, newcomm));
}
int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sweights[], int outdegree,
                                   const int dests[], const int dweights[], MPI_Info info, int reorder, MPI_Comm *newcomm) {
    UNTRACED_COMM(C_DIST_GRAPH_CREATE_ADJACENT, newcomm,
             PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sweights, outdegree, dests, dweights, info, reorder, newcomm));
}

/* ---- one-sided communication (MPI-3.1 chapter 11) ----
 * The calls are marked (the rank is in the call at its line), not recorded
 * as trace ops. What the merge's rule of conflicting accesses needs is
 * written as RMA records (R_RMA): a window's making (call C_WIN_*: comm =
 * the window's id, index = its communicator's id, count = this rank's
 * disp_unit, bytes = its size, addr and span = its memory on this rank, of
 * MPI_Win_create and MPI_Win_allocate(_shared)), and each access (call C_PUT ... C_RGET_ACCUMULATE:
 * comm = the window's id, peer = the target's world rank, count = the
 * target displacement in the target's disp_units, scount + bytes = the
 * bytes it touches from there (the target type's true lower bound and
 * span), tag = the reduction op of an accumulate (RED_ code, RMA_CAS for
 * a compare-and-swap), dtype = the target type's basic type, stag = an
 * accumulate's elements (element_code: the one predefined datatype the
 * target type is made of, a code the same in every process, | its size <<
 * 8; 0 = mixed or not known, and for a Put or Get), err = set
 * when the target type has holes in that span, index = how
 * many MPI_Win_fence calls this rank made on the window before (the fence
 * epoch: the same on every member, as fences are collective), flag = set
 * when made in a lock or start epoch, which is not a fence epoch; req =
 * its ordinal, counting the rank's accesses from 1).
 * The origin buffer of a Put, an Accumulate, a Get_accumulate, a
 * Fetch_and_op, a Compare_and_swap or a request form (MPI_Rput,
 * MPI_Raccumulate, MPI_Rget_accumulate) is hashed at the call and again
 * when the call that completes it at the origin returns (MPI_Win_fence,
 * MPI_Win_complete, MPI_Win_unlock(_all), MPI_Win_flush(_local)(_all) of
 * its target, or the wait or test that completes a request form's
 * request: rma_reqs_done): when
 * the hashes differ, the program wrote it in between (sec. 11.3: "the
 * origin buffer must not be updated until the operation completes"), and
 * an RMA record with that call's code, pc and module says so, with the
 * access's ordinal in req.
 *
 * A window's default error handler is MPI_ERRORS_ARE_FATAL, not the
 * world's (sec. 8.3.2): the shim gives each window it sees made one that
 * records the error as the world's does (errhandler), so that an RMA
 * synchronization error (MPI_ERR_RMA_SYNC: a Put outside an access epoch,
 * an unlock without a lock) names its rank, call and line. */
enum { RMA_CAS = 255 };
struct win_lock {
    int target; /* -1: MPI_Win_lock_all; -2: MPI_Win_start */
    int kind;   /* RMA_EPOCH_EXCL, _SHARED or _START */
    uint64_t ord;
};
enum { WIN_LOCKS = 16 };
struct win {
    MPI_Win h; /* MPI_WIN_NULL once freed (kept: it counts for the next id) */
    int id, comm, size, fences, held;
    /* open: the last fence did not assert MPI_MODE_NOSUCCEED, so a fence
     * epoch is open until the next one; mixed_call, mixed_pc: the first
     * lock epoch opened since then (0: none), mixed_target the world rank
     * it locked (-1: MPI_Win_lock_all). See win_fenced. */
    int open, mixed_call, mixed_target;
    uintptr_t mixed_pc;
    int *world; /* the members' world ranks; NULL: the world's */
    struct win_lock locks[WIN_LOCKS]; /* the lock and start epochs this rank holds (more go untracked) */
    int nlocks;
};
static uint64_t lock_ord;
static struct win *wins;
static int nwins, capwins;
/* pending origin buffers (see above). Lock held. */
struct rma_pend {
    MPI_Win win;
    int target; /* the target's rank in the window */
    const void *buf;
    int count;
    MPI_Datatype dt;
    uint64_t hash, ord; /* hash 0: a Get's, watched instead (watch_add) */
    int result; /* a result buffer (Get_accumulate, Fetch_and_op, Compare_and_swap), watched */
    MPI_Request req; /* a request-based access's request (MPI_Rput...), whose completion completes it too; else MPI_REQUEST_NULL */
    uint64_t addr; /* a watched buffer's bytes (dense_span; 0: not dense), for pend_overlap */
    int64_t span;
};
static struct rma_pend *pends;
static int npends, cappends;
static uint64_t rma_ord;
/* pend_add adds p to the pending origin buffers (dropped if out of memory). Lock held. */
static void pend_add(struct rma_pend p) {
    if (npends == cappends) {
        struct rma_pend *n = realloc(pends, sizeof *pends * (cappends ? 2 * cappends : 16));
        if (!n) return;
        pends = n;
        cappends = cappends ? 2 * cappends : 16;
    }
    pends[npends++] = p;
}

/* pend_watch watches buf (count elements of dt: its bytes addr, span, from
 * dense_span), which the library writes
 * for access ord until the access completes: a Get's origin buffer, or
 * (result set) an accumulate's result buffer. Lock held. */
static void pend_watch(MPI_Win win, int target, const void *buf, int count, MPI_Datatype dt, uint64_t addr,
                       int64_t span, uint64_t ord, MPI_Request rq, int result) {
    int before = nwatch;
    watch_add(WATCH_RMA | (result ? WATCH_RESULT : 0) | ord, 0, addr, span);
    if (nwatch > before) pend_add((struct rma_pend){win, target, buf, count, dt, 0, ord, result, rq, addr, span});
}
/* pend_unwatch stops watching the buffer of pending p (hash 0). Lock held. */
static void pend_unwatch(const struct rma_pend *p) {
    watch_del(WATCH_RMA | (p->result ? WATCH_RESULT : 0) | p->ord);
}
static void win_errhandler(MPI_Win *win, int *code, ...) {
    (void)win;
    errhandler(NULL, code);
}
/* win_find returns the window h, NULL if the shim did not see it made. Lock held. */
static struct win *win_find(MPI_Win h) {
    for (int i = nwins - 1; i >= 0; i--)
        if (wins[i].h == h) return &wins[i];
    return NULL;
}
/* win_made registers the window *win that CALL made at pc on comm, writes
 * its record and gives it the shim's error handler; base: the memory an
 * MPI_Win_create exposes (NULL: the library's), recorded with the caller's
 * frame (buffer-overrun). Lock not held. */
static void win_made(int call, uintptr_t pc, int rc, MPI_Comm comm, const void *base, MPI_Aint size, int disp_unit, MPI_Win *win) {
    MPI_Errhandler eh;
    if (rc != MPI_SUCCESS || !win || *win == MPI_WIN_NULL) return;
    if (PMPI_Win_create_errhandler(win_errhandler, &eh) == MPI_SUCCESS) {
        PMPI_Win_set_errhandler(*win, eh);
        PMPI_Errhandler_free(&eh);
    }
    lock();
    struct comm *c = comm_get(comm);
    if (c && !c->inter && nwins == capwins) {
        struct win *n = realloc(wins, sizeof *wins * (capwins ? 2 * capwins : 8));
        if (n) {
            wins = n;
            capwins = capwins ? 2 * capwins : 8;
        }
    }
    if (c && !c->inter && nwins < capwins) { /* (else out of memory: the window goes unwatched) */
        int k = 0;
        for (int i = 0; i < nwins; i++) k += wins[i].comm == c->id;
        struct win *w = &wins[nwins++];
        memset(w, 0, sizeof *w);
        w->h = *win; w->comm = c->id; w->size = c->size;
        w->id = comm_id_of(c->id, k, -5);
        if (c->world) {
            w->world = malloc(sizeof(int) * c->size);
            if (w->world) memcpy(w->world, c->world, sizeof(int) * c->size);
        }
        struct rec *r = rec_begin(0);
        if (r) {
            r->type = R_RMA; r->call = call; r->comm = w->id; r->index = c->id; r->count = disp_unit; r->bytes = size;
            r->pc = pc; r->module = module_of(pc); r->t0 = tnow();
            if (base && base != MPI_BOTTOM && size > 0) {
                r->addr = (uint64_t)(uintptr_t)base; r->span = size;
                r->frame = call_fp;
                if (call == C_WIN_CREATE) rel_add(REL_WIN | (uint64_t)(uint32_t)w->id, 0, r->addr);
            }
            rec_commit(r);
        }
    }
    unlock();
}
/* rma_access writes the record of an access that CALL at pc made (see
 * above); redop is an accumulate's (RED_NONE for a Put or a Get). obuf,
 * ocount, otype: the origin buffer to watch until the access completes
 * (NULL: none); rbuf, rcount, rtype: an accumulate's result buffer,
 * likewise (NULL: none); req: a request form's request, whose completion
 * completes the access too (NULL: none). Lock not held. */
/* pend_overlap returns the ordinal of a pending access whose buffer the
 * library writes (a Get's origin buffer, a fetching accumulate's result
 * buffer: watched, hash 0) and that overlaps [addr, addr+span), 0 if none,
 * with the bytes in common in *common. Two such accesses write the same
 * bytes in an order MPI does not define: a receive buffer pending twice
 * (MPI-3.1 sec. 11.3: the buffer must not be accessed until the operation
 * completes; sec. 11.7: the outcome of conflicting accesses is undefined).
 * Lock held. */
static uint64_t pend_overlap(uint64_t addr, int64_t span, int64_t *common) {
    for (int i = 0; addr && span > 0 && i < npends; i++) {
        const struct rma_pend *p = &pends[i];
        if (p->hash) continue;
        uint64_t a = p->addr;
        int64_t n = p->span;
        uint64_t lo = a > addr ? a : addr, hi = a + n < addr + span ? a + n : addr + span;
        if (a && n > 0 && lo < hi) {
            *common = (int64_t)(hi - lo);
            return p->ord;
        }
    }
    return 0;
}
static void rma_access(int call, uintptr_t pc, int rc, MPI_Win win, int target, MPI_Aint disp, int tcount,
                       MPI_Datatype ttype, int redop, const void *obuf, int ocount, MPI_Datatype otype,
                       const void *rbuf, int rcount, MPI_Datatype rtype, MPI_Request *req) {
    MPI_Aint lb, ext, tlb, text;
    if (rc != MPI_SUCCESS || target == MPI_PROC_NULL || tcount <= 0) return;
    lock();
    uint64_t ord = ++rma_ord;
    MPI_Request rq = req ? *req : MPI_REQUEST_NULL;
    /* The origin's and result buffer's bytes (the record's, and what a
     * Get's or a result buffer overlaps among the pending ones before this
     * access's own join them). */
    uint64_t oaddr = 0, raddr = 0, before = 0;
    int64_t ospan = 0, rspan = 0, common = 0;
    int gets = call == C_GET || call == C_RGET;
    if (obuf && ocount > 0) dense_span(obuf, ocount, otype, (int)bytes_of(1, otype), &oaddr, &ospan);
    if (rbuf && rcount > 0) dense_span(rbuf, rcount, rtype, (int)bytes_of(1, rtype), &raddr, &rspan);
    if (win_find(win)) {
        before = gets ? pend_overlap(oaddr, ospan, &common) : 0;
        if (!before) before = pend_overlap(raddr, rspan, &common);
    }
    if (gets && obuf && ocount > 0 && win_find(win)) {
        /* A Get's origin buffer is the library's until the access completes:
         * watched as a pending receive's (the watch above), until rma_done. */
        pend_watch(win, target, obuf, ocount, otype, oaddr, ospan, ord, rq, 0);
    } else if (obuf && ocount > 0 && win_find(win)) {
        uint64_t h = hash_data(obuf, ocount, otype);
        if (h) pend_add((struct rma_pend){win, target, obuf, ocount, otype, h, ord, 0, rq, oaddr, ospan});
    }
    /* So is the result buffer of an accumulate that fetches (sec. 11.3.4). */
    if (rbuf && rcount > 0 && win_find(win)) pend_watch(win, target, rbuf, rcount, rtype, raddr, rspan, ord, rq, 1);
    struct win *w = win_find(win);
    quiet++;
    int ok = w && target >= 0 && target < w->size && PMPI_Type_get_extent(ttype, &lb, &ext) == MPI_SUCCESS &&
             PMPI_Type_get_true_extent(ttype, &tlb, &text) == MPI_SUCCESS;
    quiet--;
    struct rec *r = ok ? rec_begin(0) : NULL;
    if (r) {
        r->type = R_RMA; r->call = call; r->comm = w->id; r->peer = w->world ? w->world[target] : target;
        r->count = disp; r->scount = tlb; r->bytes = (int64_t)(tcount - 1) * ext + text;
        /* err set: the target type leaves holes in that span (a strided
         * vector: two origins may write alternate elements), so the bytes it
         * touches are not the span, and the rule does not compare it. */
        r->err = bytes_of(tcount, ttype) != r->bytes;
        r->tag = redop; r->dtype = dtype_code(ttype); r->index = w->fences; r->flag = w->held > 0;
        r->stag = redop != RED_NONE ? element_code(ttype) : 0; /* an accumulate's element type */
        r->req = ord; r->pc = pc; r->module = module_of(pc); r->t0 = tnow();
        /* The origin's bytes (a Get writes them) and an accumulate's result
         * buffer, with the caller's frame: the merge checks them against the
         * variables they point into (buffer-overrun). */
        r->addr = oaddr; r->span = ospan;
        r->addr2 = raddr; r->span2 = rspan;
        r->ctype = obuf ? ctype_of(otype) : 0;
        r->ctype2 = rbuf ? ctype_of(rtype) : 0;
        r->frame = call_fp;
        if (w->held > 0) {
            const struct win_lock *l = NULL;
            for (int i = 0; i < w->nlocks; i++)
                if (w->locks[i].target == target || (w->locks[i].target < 0 && !l)) l = &w->locks[i];
            r->op = l ? l->kind : RMA_EPOCH_START;
            r->source = l ? (int32_t)l->ord : 0;
        }
        rec_commit(r);
    }
    struct rec *o = r && before ? rec_begin(0) : NULL;
    if (o) {
        o->type = R_RMA; o->call = call; o->op = RMA_OVERLAP; o->comm = w->id; o->req = ord; o->source = (int32_t)before;
        o->bytes = common; o->pc = pc; o->module = module_of(pc); o->t0 = tnow();
        rec_commit(o);
    }
    unlock();
}
static void pend_done(int call, uintptr_t pc, const struct rma_pend *p);
/* rma_done hashes again the pending origin buffers of win's accesses to
 * target (-1: all of them), which CALL at pc completed, and says which the
 * program wrote (see above). Lock not held. */
static void rma_done(int call, uintptr_t pc, int rc, MPI_Win win, int target) {
    if (rc != MPI_SUCCESS || npends == 0) return;
    lock();
    int kept = 0;
    for (int i = 0; i < npends; i++) {
        struct rma_pend *p = &pends[i];
        if (p->win != win || (target >= 0 && p->target != target)) pends[kept++] = *p;
        else pend_done(call, pc, p);
    }
    npends = kept;
    unlock();
}
/* rma_flushed writes the record of an MPI_Win_flush (target) or
 * MPI_Win_flush_all (target -1) of win that succeeded: every access the
 * rank made to those targets before it is complete at its target (MPI-3.1
 * sec. 11.5.4), which orders it before the rank's later accesses (the
 * merge's rule of conflicting accesses). Lock not held. */
static void rma_flushed(int call, uintptr_t pc, int rc, MPI_Win win, int target) {
    if (rc != MPI_SUCCESS) return;
    lock();
    struct win *w = win_find(win);
    struct rec *r = w ? rec_begin(0) : NULL;
    if (r) {
        r->type = R_RMA; r->call = call; r->op = RMA_FLUSH; r->comm = w->id; r->req = rma_ord;
        r->peer = target < 0 ? -1 : w->world && target < w->size ? w->world[target] : target;
        r->pc = pc; r->module = module_of(pc); r->t0 = tnow();
        rec_commit(r);
    }
    unlock();
}
/* pend_done ends the pending origin buffer p, which CALL at pc completed:
 * a Get's is no longer watched, a Put's or an accumulate's is hashed again
 * and its record written if the program wrote it. The caller drops p. Lock
 * held. */
static void pend_done(int call, uintptr_t pc, const struct rma_pend *p) {
    if (!p->hash) { /* a Get's, or a result buffer: completed, no longer the library's */
        pend_unwatch(p);
        return;
    }
    uint64_t h = hash_data(p->buf, p->count, p->dt); /* (0: not hashed, a freed type) */
    struct rec *r = h && h != p->hash ? rec_begin(0) : NULL;
    if (r) {
        r->type = R_RMA; r->call = call; r->req = p->ord; r->pc = pc; r->module = module_of(pc); r->t0 = tnow();
        rec_commit(r);
    }
}
/* rma_reqs_done ends the pending origin buffers of the request-based
 * accesses (MPI_Rput...) whose requests the wait-family CALL at pc
 * completed: before[i] is the handle of slot i before the call, after[i]
 * after it, MPI_REQUEST_NULL once completed (an access's request is never
 * persistent: MPI-3.1 sec. 3.7.3). The completion of an access that
 * fetches (MPI_Rget, MPI_Rget_accumulate) is recorded (RMA_REQ_DONE): its
 * data is in its origin or result buffer (sec. 11.3.5), so the access was
 * done at the target (a fetch and its update are one atomic operation
 * there), and the rank's later accesses do not conflict with it. (An
 * MPI_Rput's or MPI_Raccumulate's completion says only that its origin
 * buffer is free, not that the data is at the target.) Lock held. */
static void rma_reqs_done(int call, uintptr_t pc, int n, const MPI_Request *before, const MPI_Request *after) {
    for (int i = 0; i < n && npends > 0; i++) {
        if (before[i] == MPI_REQUEST_NULL || after[i] != MPI_REQUEST_NULL) continue;
        int kept = 0;
        for (int j = 0; j < npends; j++) {
            if (pends[j].req != before[i]) {
                pends[kept++] = pends[j];
                continue;
            }
            struct rma_pend *p = &pends[j];
            struct win *w = !p->hash ? win_find(p->win) : NULL; /* an MPI_Rget's origin buffer, a result buffer */
            struct rec *r = w ? rec_begin(0) : NULL;
            if (r) {
                r->type = R_RMA; r->call = call; r->op = RMA_REQ_DONE; r->comm = w->id; r->req = p->ord;
                r->pc = pc; r->module = module_of(pc); r->t0 = tnow();
                rec_commit(r);
            }
            pend_done(call, pc, p);
        }
        npends = kept;
    }
}
/* win_lock_at notes a lock or start epoch (kind) opened on win (target
 * -1: MPI_Win_lock_all, -2: MPI_Win_start) by call at pc (0: not a lock
 * epoch's), and a lock epoch opened while a fence epoch is open (see
 * win_fenced). Lock not held. */
static void win_lock_at(int rc, MPI_Win win, int target, int kind, int call, uintptr_t pc) {
    if (rc != MPI_SUCCESS) return;
    lock();
    struct win *w = win_find(win);
    if (w && w->nlocks < WIN_LOCKS) w->locks[w->nlocks++] = (struct win_lock){target, kind, ++lock_ord};
    if (w && call && w->open && !w->mixed_call) {
        w->mixed_call = call;
        w->mixed_pc = pc;
        w->mixed_target = target < 0 ? -1 : w->world && target < w->size ? w->world[target] : target;
    }
    unlock();
}
/* win_group writes the record of an MPI_Win_post or MPI_Win_start (call)
 * of win that returned rc (op RMA_GROUP; req: a start's epoch ordinal, the
 * one its accesses carry in source, else 0; the trailer: the world ranks
 * of group, the origins a post exposes the window to or the targets a
 * start accesses). The merge matches each origin's starts with its
 * targets' posts, in order (MPI-3.1 sec. 11.5.2): the origins of one
 * exposure epoch access it together, those of two in turn. Lock not held
 * (a start's epoch is the one win_lock noted before it: none, when the
 * window holds too many epochs to note, and then no record). */
static void win_group(int call, uintptr_t pc, int rc, MPI_Win win, MPI_Group group) {
    if (rc != MPI_SUCCESS || group == MPI_GROUP_NULL) return;
    int n = 0;
    quiet++;
    if (PMPI_Group_size(group, &n) != MPI_SUCCESS) n = 0;
    int *world = n > 0 ? group_world(group, n) : NULL;
    quiet--;
    lock();
    struct win *w = win_find(win);
    uint64_t ord = 0;
    for (int i = 0; w && call == C_WIN_START && i < w->nlocks; i++)
        if (w->locks[i].target == -2) ord = w->locks[i].ord;
    struct rec *r = w && world && (call != C_WIN_START || ord) ? rec_begin((size_t)n) : NULL;
    if (r) {
        r->type = R_RMA; r->call = call; r->op = RMA_GROUP; r->comm = w->id; r->req = ord; r->nreqs = (uint32_t)n;
        for (int i = 0; i < n; i++) r->reqs[i] = (uint64_t)(int64_t)world[i];
        r->pc = pc; r->module = module_of(pc); r->t0 = tnow();
        rec_commit(r);
    }
    unlock();
    free(world);
}
/* win_lock is win_lock_at of a start epoch. */
static void win_lock(int rc, MPI_Win win, int target, int kind) {
    win_lock_at(rc, win, target, kind, 0, 0);
}
/* win_fenced notes a fence on win that returned rc, with assertion: when
 * it closes a fence epoch (the fence before it did not assert
 * MPI_MODE_NOSUCCEED, and it does not assert MPI_MODE_NOPRECEDE) in which
 * this rank opened a lock epoch on the window, it writes that lock's
 * RMA_MIXED record (peer: the rank it locked, -1 for all). Whether the
 * fences made an epoch at all (RMA calls between them) is the merge's to
 * say: mixedEpochFindings. MPI-3.1 sec. 11.5.1: a fence starts an epoch that the
 * next fence ends; sec. 11.5.3: "It is erroneous to have a window locked
 * and exposed (in an exposure epoch) concurrently". Only the next fence
 * tells: a lock after the last fence is no error. Open MPI runs it. */
static void win_fenced(int rc, MPI_Win win, int assertion) {
    if (rc != MPI_SUCCESS) return;
    lock();
    struct win *w = win_find(win);
    if (w) {
        struct rec *r = w->mixed_call && !(assertion & MPI_MODE_NOPRECEDE) ? rec_begin(0) : NULL;
        if (r) {
            r->type = R_RMA; r->call = w->mixed_call; r->op = RMA_MIXED; r->comm = w->id; r->index = w->fences - 1; r->peer = w->mixed_target;
            r->pc = w->mixed_pc; r->module = module_of(w->mixed_pc); r->t0 = tnow();
            rec_commit(r);
        }
        w->mixed_call = 0;
        w->open = !(assertion & MPI_MODE_NOSUCCEED);
    }
    unlock();
}
/* win_unlock closes the epoch of target on win (-1: the MPI_Win_lock_all
 * one, -2: the MPI_Win_start one) and writes its end's record. Lock not held. */
static void win_unlock(int call, uintptr_t pc, int rc, MPI_Win win, int target) {
    if (rc != MPI_SUCCESS) return;
    lock();
    struct win *w = win_find(win);
    for (int i = 0; w && i < w->nlocks; i++) {
        if (w->locks[i].target != target) continue;
        struct rec *r = rec_begin(0);
        if (r) {
            r->type = R_RMA; r->call = call; r->op = RMA_EPOCH_END; r->comm = w->id; r->req = w->locks[i].ord;
            r->peer = target < 0 ? -1 : w->world ? w->world[target] : target;
            r->pc = pc; r->module = module_of(pc); r->t0 = tnow();
            rec_commit(r);
        }
        w->locks[i] = w->locks[--w->nlocks];
        break;
    }
    unlock();
}
/* win_sync counts a fence (fence 1) or a lock or start epoch opened (held
 * +1) or closed (-1) on win, once the call succeeded. Lock not held. */
static void win_sync(int rc, MPI_Win win, int fence, int held) {
    if (rc != MPI_SUCCESS) return;
    lock();
    struct win *w = win_find(win);
    if (w) {
        w->fences += fence;
        w->held += held;
        if (w->held < 0) w->held = 0;
    }
    unlock();
}
/* UNTRACED_THEN is UNTRACED, then AFTER (which may read rc_ and pc_). */
#define UNTRACED_THEN(CALL, PMPI_CALL, AFTER) do { \
        if (PASS) return PMPI_CALL; \
        uintptr_t pc_ = PC(); \
        untraced_enter(CALL, pc_); \
        int rc_ = untraced_leave(PMPI_CALL); \
        AFTER; \
        return rc_; \
    } while (0)
/* fits_why holds the text of a refusal a check wrote (rma_fits, rma_null). */
static __thread char fits_why[192];
/* why_class is the MPI error class of the last refusal a check gave
 * (refusal): the call is failed with it (rma_refused). */
static __thread int why_class;
static const char *refusal(int cls, const char *why) {
    why_class = cls;
    return why;
}
/* rma_refused fails a one-sided call a check refused (why, with the class
 * it gave: MPI_ERR_TRUNCATE, MPI_ERR_BUFFER, MPI_ERR_TYPE, MPI_ERR_RMA_SYNC): it raises
 * that class on the window as an MPI that checks would, so
 * that its handler records and aborts as for the library's own errors
 * (under MPI_ERRORS_RETURN the call returns the error). */
static int rma_refused(MPI_Win win, const char *why) {
    int code = why_class;
    err_why = why;
    PMPI_Win_call_errhandler(win, code);
    err_why = NULL;
    return code;
}
/* CHECKED_THEN is UNTRACED_THEN of a call that WHY (an expression: NULL,
 * or why the call is erroneous) may refuse before it reaches the library
 * (rma_refused); a refused call has no AFTER. */
#define CHECKED_THEN(CALL, WIN, WHY, PMPI_CALL, AFTER) do { \
        if (PASS) return PMPI_CALL; \
        uintptr_t pc_ = PC(); \
        untraced_enter(CALL, pc_); \
        const char *why_ = (WHY); \
        int rc_ = untraced_leave(why_ ? rma_refused(WIN, why_) : PMPI_CALL); \
        if (!why_) { AFTER; } \
        return rc_; \
    } while (0)
/* wincreate_why says why MPI_Win_create's memory is no memory, NULL if
 * it is memory: a NULL base (in Open MPI, MPI_BOTTOM) with a size above
 * zero. MPI-3.1 sec. 11.2.1: base is "the initial address of window" of
 * size bytes; there are none at NULL (a window of no memory passes size
 * 0). Open MPI makes the window; an access to it fails (EFAULT) or
 * corrupts. */
static const char *wincreate_why(const void *base, MPI_Aint size) {
    if (base != NULL || size <= 0) return NULL;
    snprintf(fits_why, sizeof fits_why, "the window's base is NULL, with a size of %lld bytes: no memory (MPI-3.1 sec. 11.2.1)",
             (long long)size);
    return refusal(MPI_ERR_BUFFER, fits_why);
}
/* comm_refused fails an untraced call on comm that a check refused (why,
 * with its class), as rma_refused does on a window: through comm's error
 * handler. */
static int comm_refused(MPI_Comm comm, const char *why) {
    int code = why_class;
    err_why = why;
    PMPI_Comm_call_errhandler(comm, code);
    err_why = NULL;
    return code;
}
int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    if (PASS) return PMPI_Win_create(base, size, disp_unit, info, comm, win);
    uintptr_t pc_ = PC();
    untraced_enter(C_WIN_CREATE, pc_);
    const char *why_ = wincreate_why(base, size);
    int rc_ = untraced_leave(why_ ? comm_refused(comm, why_) : PMPI_Win_create(base, size, disp_unit, info, comm, win));
    if (!why_) win_made(C_WIN_CREATE, pc_, rc_, comm, base, size, disp_unit, win);
    return rc_;
}
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
    UNTRACED_THEN(C_WIN_ALLOCATE, PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win),
                  win_made(C_WIN_ALLOCATE, pc_, rc_, comm, rc_ == MPI_SUCCESS ? *(void **)baseptr : NULL, size, disp_unit, win));
}
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
    UNTRACED_THEN(C_WIN_ALLOCATE_SHARED, PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win),
                  win_made(C_WIN_ALLOCATE_SHARED, pc_, rc_, comm, rc_ == MPI_SUCCESS ? *(void **)baseptr : NULL, size, disp_unit, win));
}
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    /* (Displacements on a dynamic window are addresses: disp_unit 1.) */
    UNTRACED_THEN(C_WIN_CREATE_DYNAMIC, PMPI_Win_create_dynamic(info, comm, win),
                  win_made(C_WIN_CREATE_DYNAMIC, pc_, rc_, comm, NULL, 0, 1, win));
}
int MPI_Win_fence(int assertion, MPI_Win win) {
    UNTRACED_THEN(C_WIN_FENCE, PMPI_Win_fence(assertion, win),
                  { rma_done(C_WIN_FENCE, pc_, rc_, win, -1); win_sync(rc_, win, 1, 0); win_fenced(rc_, win, assertion); });
}
/* free_why says why freeing window h now is erroneous, NULL if it is
 * not. MPI-3.1 sec. 11.2.5: MPI_WIN_FREE "can be invoked by a process only
 * after it has completed its involvement in RMA communications on window
 * win": an epoch this rank holds (a lock without its unlock, a start
 * without its complete), or an access it made that no synchronization
 * completed since (a Put after the last fence). Open MPI frees it. */
static const char *free_why(MPI_Win h) {
    const char *why = NULL;
    lock();
    struct win *w = win_find(h);
    if (w && (w->held > 0 || w->nlocks > 0)) {
        why = "this rank still holds an access epoch of the window: an MPI_Win_lock without its MPI_Win_unlock, or an MPI_Win_start without its MPI_Win_complete (MPI-3.1 sec. 11.2.5)";
    } else if (w) {
        for (int i = 0; i < npends; i++)
            if (pends[i].win == h) {
                why = "a one-sided access of this rank on the window is not complete: no MPI_Win_fence, unlock, flush or wait completed it before this free, which ends its epoch (MPI-3.1 sec. 11.2.5)";
                break;
            }
    }
    unlock();
    return why ? refusal(MPI_ERR_RMA_SYNC, why) : NULL;
}
int MPI_Win_free(MPI_Win *win) {
    MPI_Win h = win ? *win : MPI_WIN_NULL;
    CHECKED_THEN(C_WIN_FREE, h, free_why(h), PMPI_Win_free(win), {
        lock();
        struct win *w = rc_ == MPI_SUCCESS ? win_find(h) : NULL;
        if (w) w->h = MPI_WIN_NULL;
        int id = w ? w->id : 0;
        if (w) rel_del(REL_WIN | (uint64_t)(uint32_t)w->id);
        int kept = 0;
        for (int i = 0; w && i < npends; i++) {
            if (pends[i].win != h) pends[kept++] = pends[i];
            else if (!pends[i].hash) pend_unwatch(&pends[i]);
        }
        if (w) npends = kept;
        unlock();
        if (w) freed(C_WIN_FREE, pc_, id);
    });
}
/* rma_fits says why a one-sided access's sizes are erroneous, NULL if they
 * are not. MPI-3.1 sec. 11.3.1: a Put moves data "as if the origin process
 * executed a send operation with arguments origin_addr, origin_count,
 * origin_datatype ... and the target process executed a receive operation
 * with arguments target_addr, target_count, target_datatype", and "the
 * message sent must fit, without truncation, in the target buffer"; a Get
 * the other way (sec. 11.3.2), an Accumulate as a Put (11.3.4), the fetch
 * of a Get_accumulate into its result buffer as a Get. Open MPI checks
 * none of it (its one-sided components copy what each side says). Sizes
 * in bytes; a negative count or a type whose size is unknown is the
 * library's error, not compared. The text lives until the next call on
 * this thread. */
static const char *rma_fits(int64_t from, const char *fromname, int64_t to, const char *toname) {
    if (from < 0 || to < 0 || from <= to) return NULL;
    snprintf(fits_why, sizeof fits_why,
             "the %s's %lld bytes do not fit in the %s's %lld: MPI-3.1 sec. 11.3: the data must fit without truncation", fromname,
             (long long)from, toname, (long long)to);
    return refusal(MPI_ERR_TRUNCATE, fits_why);
}
/* rma_null says why a buffer is no buffer: NULL (in Open MPI, MPI_BOTTOM)
 * with data to move and a predefined datatype, whose addresses are
 * relative to it (only a derived type of absolute addresses makes
 * MPI_BOTTOM a buffer, sec. 4.1.12). Open MPI checks it for point-to-point
 * (MPI_ERR_BUFFER) but not for one-sided calls (its copy fails with EFAULT
 * and retries for ever) nor collectives (they crash). */
static const char *rma_null(const void *buf, int count, MPI_Datatype dt, const char *name) {
    int ni = 0, na = 0, nd = 0, comb = 0;
    if (buf != NULL || count <= 0 || dt == MPI_DATATYPE_NULL || bytes_of(count, dt) <= 0) return NULL;
    quiet++;
    int ok = PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) == MPI_SUCCESS;
    quiet--;
    if (!ok || comb != MPI_COMBINER_NAMED) return NULL;
    snprintf(fits_why, sizeof fits_why, "the %s buffer is NULL, with %d element%s of a predefined datatype: no buffer", name, count,
             count == 1 ? "" : "s");
    return refusal(MPI_ERR_BUFFER, fits_why);
}
/* rma_type says why a one-sided call's datatype is no datatype:
 * MPI_DATATYPE_NULL (what MPI_Type_free leaves in the handle) or a NULL
 * handle (sec. 2.5.1: a null handle is an invalid argument, MPI_ERR_TYPE).
 * Open MPI takes MPI_DATATYPE_NULL in a Put or a Get for a type of no
 * bytes, and the call moves nothing or fails as a truncation. */
static const char *rma_type(MPI_Datatype dt, const char *name) {
    if (dt != MPI_DATATYPE_NULL && dt != (MPI_Datatype)0) return NULL;
    snprintf(fits_why, sizeof fits_why, "the %s%sdatatype is %s: no datatype", name, *name ? " " : "",
             dt == (MPI_Datatype)0 ? "a NULL handle" : "MPI_DATATYPE_NULL");
    return refusal(MPI_ERR_TYPE, fits_why);
}
/* rma_types is rma_type of an access's origin and target datatypes. */
static const char *rma_types(MPI_Datatype otype, MPI_Datatype ttype) {
    const char *why = rma_type(otype, "origin");
    return why ? why : rma_type(ttype, "target");
}
static const char *put_fits_of(const void *obuf, int ocount, MPI_Datatype otype, int tcount, MPI_Datatype ttype) {
    const char *why = rma_types(otype, ttype);
    if (!why) why = rma_null(obuf, ocount, otype, "origin");
    return why ? why : rma_fits(bytes_of(ocount, otype), "origin", bytes_of(tcount, ttype), "target");
}
static const char *get_fits_of(const void *obuf, int ocount, MPI_Datatype otype, int tcount, MPI_Datatype ttype) {
    const char *why = rma_types(otype, ttype);
    if (!why) why = rma_null(obuf, ocount, otype, "origin");
    return why ? why : rma_fits(bytes_of(tcount, ttype), "target", bytes_of(ocount, otype), "origin");
}
/* getacc_fits_of: the origin's data into the target (none with
 * MPI_NO_OP), as a Put's, then the target's into the result buffer. */
static const char *getacc_fits_of(const void *obuf, int ocount, MPI_Datatype otype, const void *rbuf, int rcount, MPI_Datatype rtype,
                                  int tcount, MPI_Datatype ttype, MPI_Op op) {
    const char *why = op == MPI_NO_OP ? rma_type(ttype, "target") : put_fits_of(obuf, ocount, otype, tcount, ttype);
    if (!why) why = rma_type(rtype, "result");
    if (!why) why = rma_null(rbuf, rcount, rtype, "result");
    return why ? why : rma_fits(bytes_of(tcount, ttype), "target", bytes_of(rcount, rtype), "result buffer");
}
/* rma_outside says why an access on win is outside every access epoch of
 * this rank (sec. 11.5: "RMA communication calls ... must occur at the
 * origin within an access epoch"), NULL when one is open: after an
 * MPI_Win_fence, inside MPI_Win_lock or MPI_Win_lock_all and its unlock,
 * or MPI_Win_start and MPI_Win_complete (which target is not checked, nor
 * a fence's assertions: what is refused is surely outside), or when the
 * shim did not see the window made. Open MPI's one-sided components let
 * such a Put through. */
static const char *rma_outside(MPI_Win win) {
    lock();
    struct win *w = win_find(win);
    int out = w && w->fences == 0 && w->held == 0 && w->nlocks == 0;
    unlock();
    return out ? refusal(MPI_ERR_RMA_SYNC, "no access epoch is open on the window at this rank: no MPI_Win_fence, MPI_Win_lock, "
                                           "MPI_Win_lock_all or MPI_Win_start before it")
               : NULL;
}
/* ACCESS_WHY is why an access is refused: outside every epoch first, else
 * what its sizes or buffers say (FITS, evaluated only then: NULL when they
 * are right). */
#define ACCESS_WHY(WIN, FITS) ({ const char *out_ = rma_outside(WIN); out_ ? out_ : (FITS); })
int MPI_Put(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
            MPI_Win win) {
    CHECKED_THEN(C_PUT, win, ACCESS_WHY(win, put_fits_of(obuf, ocount, otype, tcount, ttype)), PMPI_Put(obuf, ocount, otype, target, disp, tcount, ttype, win),
                  rma_access(C_PUT, pc_, rc_, win, target, disp, tcount, ttype, RED_NONE, obuf, ocount, otype, NULL, 0, otype, NULL));
}
int MPI_Get(void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
            MPI_Win win) {
    CHECKED_THEN(C_GET, win, ACCESS_WHY(win, get_fits_of(obuf, ocount, otype, tcount, ttype)), PMPI_Get(obuf, ocount, otype, target, disp, tcount, ttype, win),
                  rma_access(C_GET, pc_, rc_, win, target, disp, tcount, ttype, RED_NONE, obuf, ocount, otype, NULL, 0, otype, NULL));
}
int MPI_Accumulate(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                   MPI_Datatype ttype, MPI_Op op, MPI_Win win) {
    CHECKED_THEN(C_ACCUMULATE, win, ACCESS_WHY(win, put_fits_of(obuf, ocount, otype, tcount, ttype)), PMPI_Accumulate(obuf, ocount, otype, target, disp, tcount, ttype, op, win),
                  rma_access(C_ACCUMULATE, pc_, rc_, win, target, disp, tcount, ttype, redop_code(op), obuf, ocount, otype, NULL, 0, otype, NULL));
}
int MPI_Get_accumulate(const void *obuf, int ocount, MPI_Datatype otype, void *rbuf, int rcount, MPI_Datatype rtype,
                       int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win) {
    CHECKED_THEN(C_GET_ACCUMULATE, win, ACCESS_WHY(win, getacc_fits_of(obuf, ocount, otype, rbuf, rcount, rtype, tcount, ttype, op)),
                  PMPI_Get_accumulate(obuf, ocount, otype, rbuf, rcount, rtype, target, disp, tcount, ttype, op, win),
                  rma_access(C_GET_ACCUMULATE, pc_, rc_, win, target, disp, tcount, ttype, redop_code(op), obuf, ocount, otype, rbuf, rcount, rtype, NULL));
}
int MPI_Fetch_and_op(const void *obuf, void *rbuf, MPI_Datatype dt, int target, MPI_Aint disp, MPI_Op op, MPI_Win win) {
    CHECKED_THEN(C_FETCH_AND_OP, win, ACCESS_WHY(win, rma_type(dt, "")), PMPI_Fetch_and_op(obuf, rbuf, dt, target, disp, op, win),
                  rma_access(C_FETCH_AND_OP, pc_, rc_, win, target, disp, 1, dt, redop_code(op), obuf, 1, dt, rbuf, 1, dt, NULL));
}
int MPI_Compare_and_swap(const void *obuf, const void *cbuf, void *rbuf, MPI_Datatype dt, int target, MPI_Aint disp,
                         MPI_Win win) {
    CHECKED_THEN(C_COMPARE_AND_SWAP, win, ACCESS_WHY(win, rma_type(dt, "")), PMPI_Compare_and_swap(obuf, cbuf, rbuf, dt, target, disp, win),
                  rma_access(C_COMPARE_AND_SWAP, pc_, rc_, win, target, disp, 1, dt, RMA_CAS, obuf, 1, dt, rbuf, 1, dt, NULL));
}
int MPI_Rput(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
             MPI_Win win, MPI_Request *req) {
    CHECKED_THEN(C_RPUT, win, ACCESS_WHY(win, put_fits_of(obuf, ocount, otype, tcount, ttype)), PMPI_Rput(obuf, ocount, otype, target, disp, tcount, ttype, win, req),
                  rma_access(C_RPUT, pc_, rc_, win, target, disp, tcount, ttype, RED_NONE, obuf, ocount, otype, NULL, 0, otype, req));
}
int MPI_Rget(void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
             MPI_Win win, MPI_Request *req) {
    CHECKED_THEN(C_RGET, win, ACCESS_WHY(win, get_fits_of(obuf, ocount, otype, tcount, ttype)), PMPI_Rget(obuf, ocount, otype, target, disp, tcount, ttype, win, req),
                  rma_access(C_RGET, pc_, rc_, win, target, disp, tcount, ttype, RED_NONE, obuf, ocount, otype, NULL, 0, otype, req));
}
int MPI_Raccumulate(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                    MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req) {
    CHECKED_THEN(C_RACCUMULATE, win, ACCESS_WHY(win, put_fits_of(obuf, ocount, otype, tcount, ttype)), PMPI_Raccumulate(obuf, ocount, otype, target, disp, tcount, ttype, op, win, req),
                  rma_access(C_RACCUMULATE, pc_, rc_, win, target, disp, tcount, ttype, redop_code(op), obuf, ocount, otype, NULL, 0, otype, req));
}
int MPI_Rget_accumulate(const void *obuf, int ocount, MPI_Datatype otype, void *rbuf, int rcount, MPI_Datatype rtype,
                        int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req) {
    CHECKED_THEN(C_RGET_ACCUMULATE, win, ACCESS_WHY(win, getacc_fits_of(obuf, ocount, otype, rbuf, rcount, rtype, tcount, ttype, op)),
                  PMPI_Rget_accumulate(obuf, ocount, otype, rbuf, rcount, rtype, target, disp, tcount, ttype, op, win, req),
                  rma_access(C_RGET_ACCUMULATE, pc_, rc_, win, target, disp, tcount, ttype, redop_code(op), obuf, ocount, otype, rbuf, rcount, rtype, req));
}
int MPI_Win_lock(int type, int target, int assertion, MPI_Win win) {
    UNTRACED_THEN(C_WIN_LOCK, PMPI_Win_lock(type, target, assertion, win),
                  { win_sync(rc_, win, 0, 1);
                    win_lock_at(rc_, win, target, type == MPI_LOCK_SHARED ? RMA_EPOCH_SHARED : RMA_EPOCH_EXCL, C_WIN_LOCK, pc_); });
}
int MPI_Win_unlock(int target, MPI_Win win) {
    UNTRACED_THEN(C_WIN_UNLOCK, PMPI_Win_unlock(target, win),
                  { rma_done(C_WIN_UNLOCK, pc_, rc_, win, target); win_sync(rc_, win, 0, -1);
                    win_unlock(C_WIN_UNLOCK, pc_, rc_, win, target); });
}
/* lockall_why says why an MPI_Win_lock_all on win is erroneous, NULL if
 * it is not: this rank holds an access epoch on the window already (a lock
 * of one target, an MPI_Win_lock_all, an MPI_Win_start), and lock_all
 * starts one to every member, that target too: MPI-3.1 sec. 11.5,
 * "distinct access epochs for win at the same process must be disjoint".
 * Open MPI refuses a second MPI_Win_lock of one target, and a lock after
 * MPI_Win_lock_all, but lets this one through. */
static const char *lockall_why(MPI_Win win) {
    lock();
    struct win *w = win_find(win);
    int held = w && w->nlocks > 0;
    unlock();
    return held ? refusal(MPI_ERR_RMA_SYNC, "this rank holds an access epoch on the window already (an MPI_Win_lock, MPI_Win_lock_all or "
                                            "MPI_Win_start without its unlock or complete), which MPI_Win_lock_all would overlap: an origin's "
                                            "access epochs on a window must be disjoint (MPI-3.1 sec. 11.5)")
                : NULL;
}
int MPI_Win_lock_all(int assertion, MPI_Win win) {
    CHECKED_THEN(C_WIN_LOCK_ALL, win, lockall_why(win), PMPI_Win_lock_all(assertion, win),
                  { win_sync(rc_, win, 0, 1); win_lock_at(rc_, win, -1, RMA_EPOCH_SHARED, C_WIN_LOCK_ALL, pc_); });
}
int MPI_Win_unlock_all(MPI_Win win) {
    UNTRACED_THEN(C_WIN_UNLOCK_ALL, PMPI_Win_unlock_all(win),
                  { rma_done(C_WIN_UNLOCK_ALL, pc_, rc_, win, -1); win_sync(rc_, win, 0, -1);
                    win_unlock(C_WIN_UNLOCK_ALL, pc_, rc_, win, -1); });
}
int MPI_Win_flush(int target, MPI_Win win) {
    UNTRACED_THEN(C_WIN_FLUSH, PMPI_Win_flush(target, win),
                  (rma_done(C_WIN_FLUSH, pc_, rc_, win, target), rma_flushed(C_WIN_FLUSH, pc_, rc_, win, target)));
}
int MPI_Win_flush_all(MPI_Win win) {
    UNTRACED_THEN(C_WIN_FLUSH_ALL, PMPI_Win_flush_all(win),
                  (rma_done(C_WIN_FLUSH_ALL, pc_, rc_, win, -1), rma_flushed(C_WIN_FLUSH_ALL, pc_, rc_, win, -1)));
}
int MPI_Win_flush_local(int target, MPI_Win win) {
    UNTRACED_THEN(C_WIN_FLUSH_LOCAL, PMPI_Win_flush_local(target, win), rma_done(C_WIN_FLUSH_LOCAL, pc_, rc_, win, target));
}
int MPI_Win_flush_local_all(MPI_Win win) {
    UNTRACED_THEN(C_WIN_FLUSH_LOCAL_ALL, PMPI_Win_flush_local_all(win), rma_done(C_WIN_FLUSH_LOCAL_ALL, pc_, rc_, win, -1));
}
int MPI_Win_sync(MPI_Win win) { UNTRACED(C_WIN_SYNC, PMPI_Win_sync(win)); }
int MPI_Win_post(MPI_Group group, int assertion, MPI_Win win) {
    UNTRACED_THEN(C_WIN_POST, PMPI_Win_post(group, assertion, win), win_group(C_WIN_POST, pc_, rc_, win, group));
}
int MPI_Win_start(MPI_Group group, int assertion, MPI_Win win) {
    UNTRACED_THEN(C_WIN_START, PMPI_Win_start(group, assertion, win),
                  { win_sync(rc_, win, 0, 1); win_lock(rc_, win, -2, RMA_EPOCH_START);
                    win_group(C_WIN_START, pc_, rc_, win, group); });
}
int MPI_Win_complete(MPI_Win win) {
    UNTRACED_THEN(C_WIN_COMPLETE, PMPI_Win_complete(win),
                  { rma_done(C_WIN_COMPLETE, pc_, rc_, win, -1); win_sync(rc_, win, 0, -1);
                    win_unlock(C_WIN_COMPLETE, pc_, rc_, win, -2); });
}
int MPI_Win_wait(MPI_Win win) { UNTRACED(C_WIN_WAIT, PMPI_Win_wait(win)); }

/* ---- datatypes, groups and reduction ops (resource leaks) ----
 * The program's calls that make a datatype, a group or a reduction op are
 * marked (untraced) and write an R_OBJ record with the object's id; those
 * that free one write an R_FREE record with it (freed). Calls the MPI
 * library makes inside another MPI call pass through (PASS): the objects it
 * makes for itself are its own. A group call that answers MPI_GROUP_EMPTY
 * made nothing. */
enum { OBJ_TYPE = 1, OBJ_GROUP, OBJ_OP };
struct obj { uint64_t h; int kind, id; };
static struct obj *objs;
static int nobjs, capobjs, obj_ids;
/* handle_bits is a handle's value as a key (a pointer in Open MPI, an int
 * in MPICH). */
#define handle_bits(H) ({ uint64_t x_ = 0; memcpy(&x_, &(H), sizeof(H) < 8 ? sizeof(H) : 8); x_; })
/* obj_made notes the object h of kind that the program's CALL at pc made
 * (rc: the call's result) and writes its record. Lock not held. */
static void obj_made(int call, uintptr_t pc, int rc, int kind, uint64_t h) {
    if (rc != MPI_SUCCESS) return;
    lock();
    if (nobjs == capobjs) {
        struct obj *n = realloc(objs, sizeof *objs * (capobjs ? 2 * capobjs : 16));
        if (n) {
            objs = n;
            capobjs = capobjs ? 2 * capobjs : 16;
        }
    }
    if (nobjs < capobjs) { /* (else out of memory: the object goes untracked) */
        struct obj *o = &objs[nobjs++];
        o->h = h; o->kind = kind; o->id = ++obj_ids;
        struct rec *r = rec_begin(0);
        if (r) {
            r->type = R_OBJ; r->call = call; r->comm = o->id; r->tag = kind;
            r->pc = pc; r->module = module_of(pc); r->t0 = tnow();
            rec_commit(r);
        }
    }
    unlock();
}
/* obj_freed notes that the program's CALL at pc freed the object h of kind
 * (rc: the call's result). Lock not held. */
static void obj_freed(int call, uintptr_t pc, int rc, int kind, uint64_t h) {
    if (rc != MPI_SUCCESS) return;
    int id = 0;
    lock();
    for (int i = nobjs - 1; i >= 0; i--)
        if (objs[i].h == h && objs[i].kind == kind) { id = objs[i].id; objs[i] = objs[--nobjs]; break; }
    unlock();
    if (id) freed(call, pc, id);
}
/* OBJ_MADE is the body of a call that makes the object *OUT of kind KIND. */
#define OBJ_MADE(CALL, KIND, OUT, PMPI_CALL) \
    UNTRACED_THEN(CALL, PMPI_CALL, obj_made(CALL, pc_, rc_, KIND, (OUT) ? handle_bits(*(OUT)) : 0))
/* GROUP_MADE is OBJ_MADE of a group, but for MPI_GROUP_EMPTY. */
#define GROUP_MADE(CALL, OUT, PMPI_CALL) \
    UNTRACED_THEN(CALL, PMPI_CALL, \
                  if ((OUT) && *(OUT) != MPI_GROUP_EMPTY) obj_made(CALL, pc_, rc_, OBJ_GROUP, handle_bits(*(OUT))))
/* OBJ_FREE is the body of a call that frees the object *H of kind KIND. */
#define OBJ_FREE(CALL, KIND, H, PMPI_CALL) do { \
        uint64_t h_ = (H) ? handle_bits(*(H)) : 0; \
        UNTRACED_THEN(CALL, PMPI_CALL, obj_freed(CALL, pc_, rc_, KIND, h_)); \
    } while (0)

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_CONTIGUOUS, OBJ_TYPE, newtype, PMPI_Type_contiguous(count, oldtype, newtype));
}
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_VECTOR, OBJ_TYPE, newtype, PMPI_Type_vector(count, blocklength, stride, oldtype, newtype));
}
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_CREATE_HVECTOR, OBJ_TYPE, newtype, PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype));
}
int MPI_Type_indexed(int count, const int blocklengths[], const int displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_INDEXED, OBJ_TYPE, newtype, PMPI_Type_indexed(count, blocklengths, displacements, oldtype, newtype));
}
int MPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_CREATE_HINDEXED, OBJ_TYPE, newtype,
             PMPI_Type_create_hindexed(count, blocklengths, displacements, oldtype, newtype));
}
int MPI_Type_create_indexed_block(int count, int blocklength, const int displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_CREATE_INDEXED_BLOCK, OBJ_TYPE, newtype,
             PMPI_Type_create_indexed_block(count, blocklength, displacements, oldtype, newtype));
}
int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_CREATE_HINDEXED_BLOCK, OBJ_TYPE, newtype,
             PMPI_Type_create_hindexed_block(count, blocklength, displacements, oldtype, newtype));
}
int MPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displacements[], const MPI_Datatype types[],
                           MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_CREATE_STRUCT, OBJ_TYPE, newtype, PMPI_Type_create_struct(count, blocklengths, displacements, types, newtype));
}
int MPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                             MPI_Datatype oldtype, MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_CREATE_SUBARRAY, OBJ_TYPE, newtype,
             PMPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, oldtype, newtype));
}
int MPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[],
                           const int psizes[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_CREATE_DARRAY, OBJ_TYPE, newtype,
             PMPI_Type_create_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, oldtype, newtype));
}
int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_CREATE_RESIZED, OBJ_TYPE, newtype, PMPI_Type_create_resized(oldtype, lb, extent, newtype));
}
int MPI_Type_dup(MPI_Datatype type, MPI_Datatype *newtype) {
    OBJ_MADE(C_TYPE_DUP, OBJ_TYPE, newtype, PMPI_Type_dup(type, newtype));
}
int MPI_Type_free(MPI_Datatype *type) { OBJ_FREE(C_TYPE_FREE, OBJ_TYPE, type, PMPI_Type_free(type)); }
int MPI_Comm_group(MPI_Comm comm, MPI_Group *group) { GROUP_MADE(C_COMM_GROUP, group, PMPI_Comm_group(comm, group)); }
int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group) {
    GROUP_MADE(C_COMM_REMOTE_GROUP, group, PMPI_Comm_remote_group(comm, group));
}
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    GROUP_MADE(C_GROUP_INCL, newgroup, PMPI_Group_incl(group, n, ranks, newgroup));
}
int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    GROUP_MADE(C_GROUP_EXCL, newgroup, PMPI_Group_excl(group, n, ranks, newgroup));
}
int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) {
    GROUP_MADE(C_GROUP_RANGE_INCL, newgroup, PMPI_Group_range_incl(group, n, ranges, newgroup));
}
int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) {
    GROUP_MADE(C_GROUP_RANGE_EXCL, newgroup, PMPI_Group_range_excl(group, n, ranges, newgroup));
}
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    GROUP_MADE(C_GROUP_UNION, newgroup, PMPI_Group_union(group1, group2, newgroup));
}
int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    GROUP_MADE(C_GROUP_INTERSECTION, newgroup, PMPI_Group_intersection(group1, group2, newgroup));
}
int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    GROUP_MADE(C_GROUP_DIFFERENCE, newgroup, PMPI_Group_difference(group1, group2, newgroup));
}
int MPI_Win_get_group(MPI_Win win, MPI_Group *group) { GROUP_MADE(C_WIN_GET_GROUP, group, PMPI_Win_get_group(win, group)); }
int MPI_Group_free(MPI_Group *group) { OBJ_FREE(C_GROUP_FREE, OBJ_GROUP, group, PMPI_Group_free(group)); }
int MPI_Op_create(MPI_User_function *function, int commute, MPI_Op *op) {
    OBJ_MADE(C_OP_CREATE, OBJ_OP, op, PMPI_Op_create(function, commute, op));
}
int MPI_Op_free(MPI_Op *op) { OBJ_FREE(C_OP_FREE, OBJ_OP, op, PMPI_Op_free(op)); }

/* ---- blocking point-to-point ---- */
typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);

static int blocking_send(int call, int op, send_fn fn, const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, uintptr_t pc) {
    lock();
    count_call();
    uint64_t t0 = tnow();
    uint32_t mod = module_of(pc);
    enter_call(call, pc, mod);
    struct rec *r = post(call, op, pc, mod, t0, 0);
    uint32_t seq = 0;
    uint64_t h = 0;
    if (r) {
        set_envelope(r, comm_get(comm), buf, dest, tag, count, dt);
        h = r->hash = hash_data(buf, count, dt);
        seq = r->seq;
        rec_commit(r);
    }
    set_state(ST_BLOCKED);
    unlock();
    depth++;
    int rc = fn(buf, count, dt, dest, tag, comm);
    depth--;
    lock();
    watch_exit();
    if ((r = done(call, seq, 0))) { r->hash = h; rec_commit(r); }
    set_state(ST_RUNNING);
    unlock();
    return rc;
}
int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
    if (PASS) return PMPI_Send(buf, count, dt, dest, tag, comm);
    return blocking_send(C_SEND, OP_SEND, PMPI_Send, buf, count, dt, dest, tag, comm, PC());
}
int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
    if (PASS) return PMPI_Ssend(buf, count, dt, dest, tag, comm);
    return blocking_send(C_SSEND, OP_SSEND, PMPI_Ssend, buf, count, dt, dest, tag, comm, PC());
}
int MPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
    if (PASS) return PMPI_Bsend(buf, count, dt, dest, tag, comm);
    return blocking_send(C_BSEND, OP_BSEND, PMPI_Bsend, buf, count, dt, dest, tag, comm, PC());
}
int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
    if (PASS) return PMPI_Rsend(buf, count, dt, dest, tag, comm);
    return blocking_send(C_RSEND, OP_RSEND, PMPI_Rsend, buf, count, dt, dest, tag, comm, PC());
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status) {
    if (PASS) return PMPI_Recv(buf, count, dt, source, tag, comm, status);
    uintptr_t pc = PC();
    MPI_Status mine;
    if (status == MPI_STATUS_IGNORE) status = &mine;
    lock();
    count_call();
    uint64_t t0 = tnow();
    uint32_t mod = module_of(pc);
    enter_call(C_RECV, pc, mod);
    struct comm *c = comm_get(comm);
    struct rec *r = post(C_RECV, OP_RECV, pc, mod, t0, 0);
    uint32_t seq = 0;
    int64_t mult = 1;
    if (r) { mult = set_envelope(r, c, buf, source, tag, count, dt); seq = r->seq; rec_commit(r); }
    int src = source_of(source, comm);
    set_state(ST_BLOCKED);
    unlock();
    depth++;
    int rc = PMPI_Recv(buf, count, dt, src, tag, comm, status);
    depth--;
    lock();
    watch_exit();
    if ((r = done(C_RECV, seq, 0))) { complete_status(r, c, status, buf, dt, 1, mult); rec_commit(r); }
    set_state(ST_RUNNING);
    unlock();
    return rc;
}

static int sendrecv(int call, const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag,
                    void *rbuf, int rcount, MPI_Datatype rdt, int source, int rtag, MPI_Comm comm,
                    MPI_Status *status, uintptr_t pc) {
    MPI_Status mine;
    if (status == MPI_STATUS_IGNORE) status = &mine;
    lock();
    count_call();
    uint64_t t0 = tnow();
    uint32_t mod = module_of(pc);
    enter_call(call, pc, mod);
    struct comm *c = comm_get(comm);
    uint32_t s1 = 0, s2 = 0;
    uint64_t h = 0;
    int64_t mult = 1;
    /* Sendrecv_replace's one buffer is both by design: no ranges for it. */
    struct rec *r = post(call, OP_SENDRECV, pc, mod, t0, 0);
    if (r) {
        set_envelope(r, c, call == C_SENDRECV ? sbuf : NULL, dest, stag, scount, sdt);
        h = r->hash = hash_data(sbuf, scount, sdt);
        s1 = r->seq;
        rec_commit(r);
    }
    r = post(call, OP_RECV, pc, mod, t0, 0);
    if (r) { mult = set_envelope(r, c, call == C_SENDRECV ? rbuf : NULL, source, rtag, rcount, rdt); s2 = r->seq; rec_commit(r); }
    int src = source_of(source, comm);
    set_state(ST_BLOCKED);
    unlock();
    depth++;
    int rc = call == C_SENDRECV
                 ? PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, status)
                 : PMPI_Sendrecv_replace(rbuf, scount, sdt, dest, stag, src, rtag, comm, status);
    depth--;
    lock();
    watch_exit();
    if ((r = done(call, s1, 0))) { r->hash = h; rec_commit(r); }
    if ((r = done(call, s2, 0))) { complete_status(r, c, status, rbuf, rdt, 1, mult); rec_commit(r); }
    set_state(ST_RUNNING);
    unlock();
    return rc;
}
int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rdt, int source, int rtag, MPI_Comm comm, MPI_Status *status) {
    if (PASS) return PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, comm, status);
    return sendrecv(C_SENDRECV, sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, comm, status, PC());
}
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int source, int rtag,
                         MPI_Comm comm, MPI_Status *status) {
    if (PASS) return PMPI_Sendrecv_replace(buf, count, dt, dest, stag, source, rtag, comm, status);
    return sendrecv(C_SENDRECV_REPLACE, buf, count, dt, dest, stag, buf, count, dt, source, rtag, comm, status, PC());
}

/* probe_done fills a found probe's status and its size in bytes. */
static void probe_done(struct rec *r, struct comm *c, MPI_Status *status) {
    int n = 0;
    complete_status(r, c, status, NULL, MPI_BYTE, 0, 1);
    quiet++;
    PMPI_Get_count(status, MPI_BYTE, &n);
    quiet--;
    r->scount = n;
}

static void msg_add(MPI_Message h, uint32_t seq, struct comm *c);

/* blocking_probe records a blocking probe: MPI_Probe, or with msg
 * MPI_Mprobe (whose message handle is noted for the Mrecv/Imrecv that
 * receives it: msg_add). pc is the wrapper's caller. */
static int blocking_probe(int call, int source, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status, uintptr_t pc) {
    MPI_Status mine;
    if (status == MPI_STATUS_IGNORE) status = &mine;
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    enter_call(call, pc, mod);
    struct comm *c = comm_get(comm);
    struct rec *r = post(call, OP_PROBE, pc, mod, tnow(), 0);
    uint32_t seq = 0;
    int posted = r != NULL;
    if (r) { set_envelope(r, c, NULL, source, tag, 0, MPI_BYTE); r->dtype = DT_NONE; seq = r->seq; rec_commit(r); }
    int src = source_of(source, comm);
    set_state(ST_BLOCKED);
    unlock();
    depth++;
    int rc = msg ? PMPI_Mprobe(src, tag, comm, msg, status) : PMPI_Probe(src, tag, comm, status);
    depth--;
    lock();
    watch_exit();
    if (msg && posted && rc == MPI_SUCCESS) msg_add(*msg, seq, c);
    if ((r = done(call, seq, 0))) {
        probe_done(r, c, status);
        r->flag = 1;
        rec_commit(r);
    }
    set_state(ST_RUNNING);
    unlock();
    return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    if (PASS) return PMPI_Probe(source, tag, comm, status);
    return blocking_probe(C_PROBE, source, tag, comm, NULL, status, PC());
}

/* nonblocking_probe records a nonblocking probe: MPI_Iprobe, or with msg
 * MPI_Improbe (whose message handle, when found, is noted for the
 * Mrecv/Imrecv that receives it: msg_add). A probe that finds nothing is a
 * fruitless poll (note_poll). pc is the wrapper's caller. */
static int nonblocking_probe(int call, int source, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *status,
                             uintptr_t pc) {
    MPI_Status mine;
    if (status == MPI_STATUS_IGNORE) status = &mine;
    uint64_t t0 = tnow();
    uint32_t mod = enter_nonblocking(call, pc);
    int src = source;
    if (source == MPI_ANY_SOURCE && force_rank == world_rank) { /* a re-run: this may be the pinned one */
        lock();
        src = pinned_source(source, comm);
        unlock();
    }
    int rc = msg ? PMPI_Improbe(src, tag, comm, flag, msg, status) : PMPI_Iprobe(src, tag, comm, flag, status);
    depth--;
    lock();
    watch_exit();
    int found = rc == MPI_SUCCESS && *flag;
    note_poll(rc != MPI_SUCCESS || found);
    if (found) any_found(source);
    struct comm *c = comm_get(comm);
    uint64_t env[3] = {(uint64_t)(int64_t)source, (uint64_t)(int64_t)tag, (uint64_t)(uintptr_t)c};
    if (!found && rc == MPI_SUCCESS && poll_thinned(call, pc, key_of(env, 3))) {
        unlock();
        return rc;
    }
    struct rec *r = post(call, OP_IPROBE, pc, mod, t0, 0);
    if (r) {
        set_envelope(r, c, NULL, source, tag, 0, MPI_BYTE);
        r->dtype = DT_NONE;
        r->t1 = tnow();
        uint32_t seq = r->seq;
        rec_commit(r);
        if (msg && found) msg_add(*msg, seq, c);
        if ((r = done(call, seq, 0))) {
            r->flag = found;
            if (found) probe_done(r, c, status);
            rec_commit(r);
        }
    }
    unlock();
    return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    if (PASS) return PMPI_Iprobe(source, tag, comm, flag, status);
    return nonblocking_probe(C_IPROBE, source, tag, comm, flag, NULL, status, PC());
}

int MPI_Barrier(MPI_Comm comm) {
    if (PASS) return PMPI_Barrier(comm);
    uintptr_t pc = PC();
    if (inter(comm)) UNTRACED_AT(C_BARRIER, pc, PMPI_Barrier(comm)); /* as every intercommunicator collective (inter) */
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    struct comm *c = comm_get(comm);
    struct rec *r = post(C_BARRIER, OP_BARRIER, pc, mod, tnow(), 0);
    uint32_t seq = 0;
    if (r) { r->comm = c ? c->id : -1; r->count = c ? c->size : 0; r->peer = -1; r->tag = -1; seq = r->seq; rec_commit(r); }
    enter_call(C_BARRIER, pc, mod);
    set_state(ST_BLOCKED);
    unlock();
    depth++;
    int rc = PMPI_Barrier(comm);
    depth--;
    lock();
    watch_exit();
    if ((r = done(C_BARRIER, seq, 0))) rec_commit(r);
    set_state(ST_RUNNING);
    unlock();
    return rc;
}

/* ---- blocking collectives ----
 * Recorded as Barrier is (one post before the PMPI call, its done after),
 * with the trace op of the collective, the root's world rank as peer (-1
 * without a root), the caller's rank in comm as tag, comm's size as count
 * and the caller's side of the type signature: dtype and bytes (bytes_of),
 * which the standard requires equal on every member for the collectives
 * without per-rank counts (the replay checks it: a collective mismatch).
 * Those of intercommunicators are not recorded (inter). */

/* me_in is the caller's rank in comm, -1 if it cannot tell. */
static int me_in(MPI_Comm comm) {
    int me = -1;
    quiet++;
    if (PMPI_Comm_rank(comm, &me) != MPI_SUCCESS) me = -1;
    quiet--;
    return me;
}
static int size_in(MPI_Comm comm);
/* vcounts are the per-member counts of a v collective that the rules
 * compare across members (MPI-3.1 sec. 5.5-5.8: the type signature of what
 * one process sends to another must equal what that one receives from it):
 * a Gatherv root's recvcounts, a Scatterv root's sendcounts, every
 * member's recvcounts of an Allgatherv and a Reduce_scatter, and every
 * member's sendcounts then recvcounts of an Alltoallv. They are written as
 * the post record's trailer, in bytes (count x the type's size), one per
 * member of the communicator in its rank order (two vectors for an
 * Alltoallv); none on an intercommunicator or where a vector is not
 * significant (a non-root's). */
struct vcounts { const int *a, *b; MPI_Datatype at, bt; int n; };
static size_t vc_len(const struct vcounts *v) {
    if (!v || !v->a || v->n <= 0) return 0;
    return (size_t)v->n * (v->b ? 2 : 1);
}
static void vc_put(const struct vcounts *v, uint64_t *out) {
    int as = (int)bytes_of(1, v->at), bs = v->b ? (int)bytes_of(1, v->bt) : 0;
    for (int i = 0; i < v->n; i++) out[i] = (uint64_t)((int64_t)v->a[i] * as);
    if (v->b)
        for (int i = 0; i < v->n; i++) out[v->n + i] = (uint64_t)((int64_t)v->b[i] * bs);
}
/* own_send is the vcounts of an Allgather's or Alltoall's own send block,
 * what it sends each member (one count), for the merge to compare with
 * what each member receives from it (MPI-3.1 secs. 5.7, 5.8: the type
 * signatures are equal); none with MPI_IN_PLACE (no send side). */
static struct vcounts own_send(const void *sbuf, const int *scount, MPI_Datatype stype, MPI_Comm comm) {
    struct vcounts v = {scount, NULL, stype, stype, 0};
    if (sbuf != MPI_IN_PLACE && !inter(comm)) v.n = 1;
    return v;
}
/* vc_of is the vcounts of n members (n = comm's size, 0 on an
 * intercommunicator, when a is NULL: none). */
static struct vcounts vc_of(MPI_Comm comm, const int *a, MPI_Datatype at, const int *b, MPI_Datatype bt) {
    struct vcounts v = {a, b, at, bt, 0};
    if (a && !inter(comm)) v.n = size_in(comm);
    return v;
}

/* coll_bufs says why a collective's significant buffer is no buffer
 * (rma_null), NULL if none: the send buffer where ssig says it is read,
 * the receive buffer where rsig says it is written (a Gather's only at its
 * root, a Scatter's send buffer only there). MPI_IN_PLACE is not NULL. */
static const char *coll_bufs(const void *sbuf, int scount, MPI_Datatype stype, int ssig, const void *rbuf, int rcount,
                             MPI_Datatype rtype, int rsig) {
    const char *why = ssig ? rma_null(sbuf, scount, stype, "send") : NULL;
    return why ? why : rsig ? rma_null(rbuf, rcount, rtype, "receive") : NULL;
}
/* red_type says why a reduction's datatype is no datatype: a NULL handle.
 * Open MPI refuses MPI_DATATYPE_NULL (MPI_ERR_TYPE) and so a NULL handle in
 * its other calls, but its reductions read through the handle first (to
 * check the op against it) and crash. */
static const char *red_type(MPI_Datatype dt) {
    return dt == (MPI_Datatype)0 ? refusal(MPI_ERR_TYPE, "the datatype handle is NULL: no datatype") : NULL;
}
/* red_bufs is coll_bufs of a reduction (one count and datatype for both
 * buffers), after its datatype (red_type). */
static const char *red_bufs(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, int rsig) {
    const char *why = red_type(dt);
    return why ? why : coll_bufs(sbuf, count, dt, 1, rbuf, count, dt, rsig);
}
/* vsum is the sum of the positive counts of a v collective's vector, one
 * per member of comm: whether that side moves data (rma_null's count); 0
 * without a vector or on an intercommunicator (not checked). A vector that
 * is not significant (a non-root's) must not be passed: it may be any
 * pointer. */
static int vsum(MPI_Comm comm, const int *counts) {
    if (!counts || inter(comm)) return 0;
    int n = size_in(comm);
    int64_t s = 0;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0) s += counts[i];
    return s > INT_MAX ? INT_MAX : (int)s;
}
/* vext is how many elements of a v collective's buffer its counts and
 * displacements cover, from its start: the greatest displs[i] + counts[i]
 * of a member that moves data (0 without vectors or on an
 * intercommunicator). The same care as vsum's: only significant vectors. */
static int64_t vext(MPI_Comm comm, const int *counts, const int *displs) {
    if (!counts || !displs || inter(comm)) return 0;
    int n = size_in(comm);
    int64_t e = 0;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0 && displs[i] >= 0 && (int64_t)displs[i] + counts[i] > e) e = (int64_t)displs[i] + counts[i];
    return e;
}
/* coll_refused fails a collective a check refused (why, with the class it
 * gave: MPI_ERR_BUFFER for no buffer, MPI_ERR_TYPE for no datatype),
 * inside the call (after coll_enter or enter_nonblocking): it raises that
 * class on comm as an MPI that checks would (the error handler records it,
 * the call refused for its argument, and aborts), where Open MPI would
 * crash in it. */
static int coll_refused(MPI_Comm comm, const char *why) {
    refusing_post = 1;
    int code = comm_refused(comm, why);
    refusing_post = 0;
    return code;
}

/* coll_at holds the bytes a blocking collective's significant send and
 * receive buffers cover (dense_span), from its wrapper (coll_note) to its
 * coll_enter, which records them (the merge checks them against the
 * variables they point into); call says whose they are, so that a note
 * coll_enter did not take (an intercommunicator's call) is never taken
 * for another call's. */
static __thread struct { int call; uint64_t addr[2]; int64_t span[2]; uint32_t ctype[2]; } coll_at;
/* coll_note notes a blocking collective's buffers for its coll_enter:
 * scount elements of stype at sbuf where ssig says the send buffer is
 * read, rcount of rtype at rbuf where rsig says the receive buffer is
 * written (counts in all: a Gather root's are its members' together). */
static void coll_note(int call, const void *sbuf, int64_t scount, MPI_Datatype stype, int ssig, const void *rbuf,
                      int64_t rcount, MPI_Datatype rtype, int rsig) {
    coll_at.call = call;
    coll_at.addr[0] = coll_at.addr[1] = 0;
    coll_at.span[0] = coll_at.span[1] = 0;
    coll_at.ctype[0] = ctype_of(stype);
    coll_at.ctype[1] = ctype_of(rtype);
    if (ssig && scount <= INT_MAX && stype != (MPI_Datatype)0)
        dense_span(sbuf, (int)scount, stype, (int)bytes_of(1, stype), &coll_at.addr[0], &coll_at.span[0]);
    if (rsig && rcount <= INT_MAX && rtype != (MPI_Datatype)0)
        dense_span(rbuf, (int)rcount, rtype, (int)bytes_of(1, rtype), &coll_at.addr[1], &coll_at.span[1]);
}

/* coll_enter records the post of a collective and enters the library:
 * its datatype as a message op's (set_dtype: the collectives' datatype
 * rule compares basic types), and a reduction's op (redop_code) in index.
 * coll_leave records its done. */
static uint32_t coll_enter(int call, int op, uintptr_t pc, MPI_Comm comm, int root, int64_t bytes, MPI_Datatype dt,
                           int redop, const struct vcounts *vc) {
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    struct comm *c = comm_get(comm);
    struct rec *r = post(call, op, pc, mod, tnow(), vc_len(vc));
    uint32_t seq = 0;
    if (r) {
        r->comm = c ? c->id : -1; r->count = c ? c->size : 0;
        r->peer = root < 0 ? -1 : xlate(c, root); r->tag = me_in(comm);
        int64_t n = 1;
        set_dtype(r, dt, &n);
        r->bytes = bytes; r->index = redop;
        if (vc_len(vc)) vc_put(vc, rec_reqs(r));
        if (coll_at.call == call) {
            r->addr = coll_at.addr[0]; r->span = coll_at.span[0];
            r->addr2 = coll_at.addr[1]; r->span2 = coll_at.span[1];
            r->ctype = coll_at.ctype[0]; r->ctype2 = coll_at.ctype[1];
        }
        seq = r->seq; rec_commit(r);
    }
    enter_call(call, pc, mod);
    set_state(ST_BLOCKED);
    unlock();
    depth++;
    return seq;
}
static int coll_leave(int call, uint32_t seq, int rc) {
    depth--;
    lock();
    watch_exit();
    struct rec *r;
    if ((r = done(call, seq, 0))) rec_commit(r);
    set_state(ST_RUNNING);
    unlock();
    return rc;
}
#define COLL(CALL, OP, ROOT, BYTES, DT, PMPI_CALL) VCOLL(CALL, OP, ROOT, BYTES, DT, RED_NONE, NULL, PMPI_CALL)
/* REDCOLL is COLL of a reduction: REDOP is its op's code (redop_code). */
#define REDCOLL(CALL, OP, ROOT, BYTES, DT, REDOP, PMPI_CALL) VCOLL(CALL, OP, ROOT, BYTES, DT, REDOP, NULL, PMPI_CALL)
/* VCOLL is REDCOLL with the per-member counts VC (a struct vcounts *, or NULL). */
#define VCOLL(CALL, OP, ROOT, BYTES, DT, REDOP, VC, PMPI_CALL) do { \
        if (inter(comm)) UNTRACED_AT(CALL, pc, PMPI_CALL); \
        uint32_t seq_ = coll_enter(CALL, OP, pc, comm, ROOT, BYTES, DT, REDOP, VC); \
        return coll_leave(CALL, seq_, PMPI_CALL); \
    } while (0)

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
    if (PASS) return PMPI_Bcast(buf, count, dt, root, comm);
    uintptr_t pc = PC();
    const char *why = coll_bufs(buf, count, dt, 1, NULL, 0, dt, 0);
    int at = me_in(comm) == root;
    coll_note(C_BCAST, buf, count, dt, at, buf, count, dt, !at);
    COLL(C_BCAST, OP_BCAST, root, bytes_of(count, dt), dt, why ? coll_refused(comm, why) : PMPI_Bcast(buf, count, dt, root, comm));
}
int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
    if (PASS) return PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm);
    uintptr_t pc = PC();
    const char *why = red_bufs(sbuf, rbuf, count, dt, me_in(comm) == root);
    coll_note(C_REDUCE, sbuf, count, dt, 1, rbuf, count, dt, me_in(comm) == root);
    REDCOLL(C_REDUCE, OP_REDUCE, root, bytes_of(count, dt), dt, redop_code(op),
            why ? coll_refused(comm, why) : PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm));
}
int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    if (PASS) return PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm);
    uintptr_t pc = PC();
    const char *why = red_bufs(sbuf, rbuf, count, dt, 1);
    coll_note(C_ALLREDUCE, sbuf, count, dt, 1, rbuf, count, dt, 1);
    REDCOLL(C_ALLREDUCE, OP_ALLREDUCE, -1, bytes_of(count, dt), dt, redop_code(op),
            why ? coll_refused(comm, why) : PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm));
}
int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    if (PASS) return PMPI_Scan(sbuf, rbuf, count, dt, op, comm);
    uintptr_t pc = PC();
    const char *why = red_bufs(sbuf, rbuf, count, dt, 1);
    coll_note(C_SCAN, sbuf, count, dt, 1, rbuf, count, dt, 1);
    REDCOLL(C_SCAN, OP_SCAN, -1, bytes_of(count, dt), dt, redop_code(op),
            why ? coll_refused(comm, why) : PMPI_Scan(sbuf, rbuf, count, dt, op, comm));
}
int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    if (PASS) return PMPI_Exscan(sbuf, rbuf, count, dt, op, comm);
    uintptr_t pc = PC();
    /* rank 0's receive buffer is not significant (MPI-3.1 sec. 5.11.2) */
    const char *why = red_bufs(sbuf, rbuf, count, dt, me_in(comm) != 0);
    coll_note(C_EXSCAN, sbuf, count, dt, 1, rbuf, count, dt, me_in(comm) != 0);
    REDCOLL(C_EXSCAN, OP_EXSCAN, -1, bytes_of(count, dt), dt, redop_code(op),
            why ? coll_refused(comm, why) : PMPI_Exscan(sbuf, rbuf, count, dt, op, comm));
}
int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    if (PASS) return PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm);
    uintptr_t pc = PC();
    const char *why = red_type(dt);
    int64_t all = (int64_t)rcount * size_in(comm); /* the send buffer: a block for each member */
    if (!why) why = coll_bufs(sbuf, all > INT_MAX ? INT_MAX : (int)all, dt, 1, rbuf, rcount, dt, 1);
    coll_note(C_REDUCE_SCATTER_BLOCK, sbuf, all, dt, 1, rbuf, rcount, dt, 1);
    REDCOLL(C_REDUCE_SCATTER_BLOCK, OP_REDUCE_SCATTER_BLOCK, -1, bytes_of(rcount, dt), dt, redop_code(op),
            why ? coll_refused(comm, why) : PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm));
}
int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    if (PASS) return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm);
    uintptr_t pc = PC();
    int me = me_in(comm);
    struct vcounts vc = vc_of(comm, rcounts, dt, NULL, dt);
    const char *why = red_type(dt);
    if (!why) why = coll_bufs(sbuf, vsum(comm, rcounts), dt, 1, rbuf, me >= 0 && rcounts ? rcounts[me] : 0, dt, 1);
    coll_note(C_REDUCE_SCATTER, sbuf, vsum(comm, rcounts), dt, 1, rbuf, me >= 0 && rcounts ? rcounts[me] : 0, dt, 1);
    VCOLL(C_REDUCE_SCATTER, OP_REDUCE_SCATTER, -1, me >= 0 && rcounts ? bytes_of(rcounts[me], dt) : 0, dt, redop_code(op),
          &vc, why ? coll_refused(comm, why) : PMPI_Reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm));
}
/* Gather: the root's side is what it receives from each rank, the others'
 * what they send; Scatter the other way round. */
int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
               int root, MPI_Comm comm) {
    if (PASS) return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    uintptr_t pc = PC();
    int at = me_in(comm) == root;
    const char *why = coll_bufs(sbuf, scount, stype, 1, rbuf, rcount, rtype, at);
    coll_note(C_GATHER, sbuf, scount, stype, 1, rbuf, (int64_t)rcount * size_in(comm), rtype, at);
    COLL(C_GATHER, OP_GATHER, root, at ? bytes_of(rcount, rtype) : bytes_of(scount, stype), at ? rtype : stype,
         why ? coll_refused(comm, why) : PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
}
int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                int root, MPI_Comm comm) {
    if (PASS) return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    uintptr_t pc = PC();
    int at = me_in(comm) == root;
    const char *why = coll_bufs(sbuf, scount, stype, at, rbuf, rcount, rtype, 1);
    coll_note(C_SCATTER, sbuf, (int64_t)scount * size_in(comm), stype, at, rbuf, rcount, rtype, 1);
    COLL(C_SCATTER, OP_SCATTER, root, at ? bytes_of(scount, stype) : bytes_of(rcount, rtype), at ? stype : rtype,
         why ? coll_refused(comm, why) : PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
}
/* Allgather, Alltoall: what each rank receives from each (valid with
 * MPI_IN_PLACE too). */
int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
    if (PASS) return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    uintptr_t pc = PC();
    struct vcounts vc = own_send(sbuf, &scount, stype, comm);
    const char *why = coll_bufs(sbuf, scount, stype, 1, rbuf, rcount, rtype, 1);
    coll_note(C_ALLGATHER, sbuf, scount, stype, 1, rbuf, (int64_t)rcount * size_in(comm), rtype, 1);
    VCOLL(C_ALLGATHER, OP_ALLGATHER, -1, bytes_of(rcount, rtype), rtype, RED_NONE, &vc,
          why ? coll_refused(comm, why) : PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}
int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
    if (PASS) return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    uintptr_t pc = PC();
    struct vcounts vc = own_send(sbuf, &scount, stype, comm);
    const char *why = coll_bufs(sbuf, scount, stype, 1, rbuf, rcount, rtype, 1);
    coll_note(C_ALLTOALL, sbuf, (int64_t)scount * size_in(comm), stype, 1, rbuf, (int64_t)rcount * size_in(comm), rtype, 1);
    VCOLL(C_ALLTOALL, OP_ALLTOALL, -1, bytes_of(rcount, rtype), rtype, RED_NONE, &vc,
          why ? coll_refused(comm, why) : PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}
/* The v variants: the caller's own contribution (its sizes may differ
 * from rank to rank: not compared as the others' are), and the counts
 * vectors the rules compare (vcounts). */
int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
    if (PASS) return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    uintptr_t pc = PC();
    int me = me_in(comm);
    int inplace = sbuf == MPI_IN_PLACE && me == root && me >= 0 && rcounts;
    struct vcounts vc = vc_of(comm, me == root ? rcounts : NULL, rtype, NULL, rtype);
    const char *why = coll_bufs(sbuf, scount, stype, 1, rbuf, me == root ? vsum(comm, rcounts) : 0, rtype, me == root);
    coll_note(C_GATHERV, sbuf, scount, stype, 1, rbuf, me == root ? vext(comm, rcounts, displs) : 0, rtype, me == root);
    VCOLL(C_GATHERV, OP_GATHERV, root, inplace ? bytes_of(rcounts[me], rtype) : bytes_of(scount, stype),
          inplace ? rtype : stype, RED_NONE, &vc,
          why ? coll_refused(comm, why) : PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm));
}
int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm) {
    if (PASS) return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    uintptr_t pc = PC();
    int me = me_in(comm);
    int inplace = rbuf == MPI_IN_PLACE && me == root && me >= 0 && scounts;
    struct vcounts vc = vc_of(comm, me == root ? scounts : NULL, stype, NULL, stype);
    const char *why = coll_bufs(sbuf, me == root ? vsum(comm, scounts) : 0, stype, me == root, rbuf, rcount, rtype, 1);
    coll_note(C_SCATTERV, sbuf, me == root ? vext(comm, scounts, displs) : 0, stype, me == root, rbuf, rcount, rtype, 1);
    VCOLL(C_SCATTERV, OP_SCATTERV, root, inplace ? bytes_of(scounts[me], stype) : bytes_of(rcount, rtype),
          inplace ? stype : rtype, RED_NONE, &vc,
          why ? coll_refused(comm, why) : PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm));
}
int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
    if (PASS) return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    uintptr_t pc = PC();
    int me = sbuf == MPI_IN_PLACE ? me_in(comm) : -1;
    struct vcounts vc = vc_of(comm, rcounts, rtype, NULL, rtype);
    const char *why = coll_bufs(sbuf, scount, stype, 1, rbuf, vsum(comm, rcounts), rtype, 1);
    coll_note(C_ALLGATHERV, sbuf, scount, stype, 1, rbuf, vext(comm, rcounts, displs), rtype, 1);
    VCOLL(C_ALLGATHERV, OP_ALLGATHERV, -1, me >= 0 && rcounts ? bytes_of(rcounts[me], rtype) : bytes_of(scount, stype),
          me >= 0 ? rtype : stype, RED_NONE, &vc,
          why ? coll_refused(comm, why) : PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm));
}
int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
    if (PASS) return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    uintptr_t pc = PC();
    int n = inter(comm) || !rcounts ? 0 : size_in(comm); /* inter: rcounts has the remote size, passed through */
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += rcounts[i];
    /* MPI_IN_PLACE: what a rank sends is taken from its receive buffer, by rcounts */
    struct vcounts vc = sbuf == MPI_IN_PLACE ? vc_of(comm, rcounts, rtype, rcounts, rtype)
                                             : vc_of(comm, scounts, stype, rcounts, rtype);
    if (!vc.b) vc.n = 0;
    /* (with MPI_IN_PLACE the send vector is ignored: it may be any pointer) */
    const char *why = coll_bufs(sbuf, sbuf == MPI_IN_PLACE ? 0 : vsum(comm, scounts), stype, 1, rbuf, vsum(comm, rcounts), rtype, 1);
    coll_note(C_ALLTOALLV, sbuf, sbuf == MPI_IN_PLACE ? 0 : vext(comm, scounts, sdispls), stype, 1, rbuf,
              vext(comm, rcounts, rdispls), rtype, 1);
    VCOLL(C_ALLTOALLV, OP_ALLTOALLV, -1, bytes_of(total, rtype), rtype, RED_NONE, &vc,
          why ? coll_refused(comm, why) : PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm));
}

/* ---- nonblocking collectives (MPI-3.1 sec. 5.12) ----
 * Each is recorded as its blocking form is (coll_enter: root as world
 * rank, the caller's rank in comm as tag, comm's size as count, the
 * caller's side of the type signature, a reduction's op in index), with
 * the trace op of the nonblocking form, as a nonblocking call: one post
 * after the PMPI call returned, with the request it made (as MPI_Isend's,
 * track); the Wait/Test family completes it as any tracked request
 * (complete_req). Arguments are read before the call (the request may be
 * complete by the time it returns). Intercommunicators pass through.
 *
 * Their buffers belong to the library until the request completes (sec.
 * 5.12: "the user must not ... modify ... buffers ... until the operation
 * completes"; a receive buffer must not be accessed). The caller's send side
 * (struct side: sbuf) is hashed at the call and again at completion, as an
 * Isend's is: the post and done records carry both hashes and a difference is
 * an in-flight-mutation. Its receive side (rbuf), when it is one dense range,
 * is watched as a pending MPI_Irecv's buffer is (watch_add): a write by the
 * program is a recv-buffer-write. A side the call does not use on this rank
 * (a non-root's receive side of a Gather, MPI_IN_PLACE) is none; the v
 * variants' sides (displacements: gaps the library never touches) are not
 * watched. */
struct side { const void *buf; int count; MPI_Datatype dt; };
static const struct side none = {NULL, 0, MPI_DATATYPE_NULL};
static struct side side_of(const void *buf, int count, MPI_Datatype dt) {
    if (!buf || buf == MPI_IN_PLACE || buf == MPI_BOTTOM || count <= 0 || dt == MPI_DATATYPE_NULL) return none;
    struct side s = {buf, count, dt};
    return s;
}
static int cmp_run(const void *a, const void *b) {
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}
/* vside is the side of a nonblocking v collective's buffer: the first run
 * of elements its counts and displacements cover without a hole (the
 * members' blocks, sorted by displacement, joined while they touch or
 * overlap). The holes between blocks are the program's (MPI-3.1 sec. 5.12
 * makes the collective's buffers MPI's, not what lies between them), so
 * the side watched or hashed is that run alone: a write there is the
 * collective's; one elsewhere in the buffer may be none of its business. */
static struct side vside(const void *buf, MPI_Comm comm, const int *counts, const int *displs, MPI_Datatype dt) {
    if (!buf || buf == MPI_IN_PLACE || buf == MPI_BOTTOM || !counts || !displs || dt == MPI_DATATYPE_NULL || inter(comm)) return none;
    int n = size_in(comm), k = 0;
    int64_t (*iv)[2] = n > 0 ? malloc(sizeof *iv * n) : NULL;
    if (!iv) return none;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0 && displs[i] >= 0) {
            iv[k][0] = displs[i];
            iv[k][1] = (int64_t)displs[i] + counts[i];
            k++;
        }
    int64_t lo = 0, hi = 0;
    if (k > 0) {
        qsort(iv, k, sizeof *iv, cmp_run);
        lo = iv[0][0], hi = iv[0][1];
        for (int j = 1; j < k && iv[j][0] <= hi; j++)
            if (iv[j][1] > hi) hi = iv[j][1];
    }
    free(iv);
    MPI_Aint lb = 0, ext = 0;
    if (hi - lo <= 0 || hi - lo > INT_MAX || PMPI_Type_get_extent(dt, &lb, &ext) != MPI_SUCCESS || ext <= 0) return none;
    return side_of((const char *)buf + lo * ext, (int)(hi - lo), dt);
}
/* side_n is the side of n blocks of count elements of dt at buf (a Gather
 * root's receive buffer: one block per member); none past an int's range. */
static struct side side_n(const void *buf, int count, int n, MPI_Datatype dt) {
    if (n <= 0 || (int64_t)count * n > INT_MAX) return none;
    return side_of(buf, count * n, dt);
}
/* size_in is the size of comm, 0 if it cannot tell. */
static int size_in(MPI_Comm comm) {
    int n = 0;
    quiet++;
    if (PMPI_Comm_size(comm, &n) != MPI_SUCCESS) n = 0;
    quiet--;
    return n;
}
static void icoll_track(int call, int op, uintptr_t pc, uint32_t mod, uint64_t t0, MPI_Comm comm, int root, int me,
                        int64_t bytes, MPI_Datatype dt, int redop, MPI_Request *addr, struct side snd, uint64_t shash,
                        struct side rcv, const struct vcounts *vc) {
    struct comm *c = comm_get(comm);
    struct rec *r = post(call, op, pc, mod, t0, vc_len(vc));
    if (!r) return;
    if (vc_len(vc)) vc_put(vc, rec_reqs(r));
    r->comm = c ? c->id : -1; r->count = c ? c->size : 0;
    r->peer = root < 0 ? -1 : xlate(c, root); r->tag = me;
    int64_t n = 1;
    set_dtype(r, dt, &n);
    r->bytes = bytes; r->index = redop;
    r->req = next_req++;
    r->t1 = tnow();
    struct req *e = req_new(*addr, addr);
    e->id = r->req; e->seq = r->seq; e->op = op; e->dtype = r->dtype; e->active = 1; e->mult = 1; e->cancel = 0;
    e->peer = -1; e->comm = c;
    if (shash) { /* the send side: its completion hashes it again (complete_req) */
        r->hash = shash;
        e->buf = snd.buf; e->count = snd.count; e->hash = shash;
        e->dt = keep_type(snd.dt, &e->owned);
    }
    if (snd.buf) dense_span(snd.buf, snd.count, snd.dt, (int)bytes_of(1, snd.dt), &r->addr, &r->span);
    rel_add(r->req, r->seq, r->addr);
    r->ctype = ctype_of(snd.dt);
    r->ctype2 = ctype_of(rcv.dt);
    if (rcv.buf) {
        dense_span(rcv.buf, rcv.count, rcv.dt, (int)bytes_of(1, rcv.dt), &r->addr2, &r->span2);
        watch_add(r->req, r->seq, r->addr2, r->span2);
        if (r->addr2 != r->addr) rel_add(r->req, r->seq, r->addr2);
    }
    rec_commit(r);
}
/* ICOLL_BUFS is ICOLL with the send and receive sides SND and RCV (struct
 * side), and WHY (an expression: NULL, or why the call is erroneous, for
 * coll_refused). */
#define ICOLL_BUFS(CALL, OP, ROOT, BYTES, DT, REDOP, SND, RCV, WHY, PMPI_CALL) \
    ICOLL_FULL(CALL, OP, ROOT, BYTES, DT, REDOP, SND, RCV, NULL, WHY, PMPI_CALL)
/* ICOLL_FULL: a refused call (WHY) reaches neither the library nor the
 * trace (icoll_track records successes only). */
#define ICOLL_FULL(CALL, OP, ROOT, BYTES, DT, REDOP, SND, RCV, VC, WHY, PMPI_CALL) do { \
        if (inter(comm)) return PMPI_CALL; \
        uint64_t t0_ = tnow(); \
        int me_ = me_in(comm); \
        int64_t bytes_ = (BYTES); \
        struct side snd_ = (SND), rcv_ = (RCV); \
        const char *why_ = (WHY); \
        uint32_t mod_ = enter_nonblocking(CALL, pc); \
        uint64_t h_ = 0; \
        if (snd_.buf && !why_) { lock(); h_ = hash_data(snd_.buf, snd_.count, snd_.dt); unlock(); } \
        int rc_ = why_ ? coll_refused(comm, why_) : PMPI_CALL; \
        depth--; \
        lock(); \
        watch_exit(); \
        if (rc_ == MPI_SUCCESS) icoll_track(CALL, OP, pc, mod_, t0_, comm, ROOT, me_, bytes_, DT, REDOP, req, snd_, h_, rcv_, VC); \
        unlock(); \
        return rc_; \
    } while (0)
#define ICOLL(CALL, OP, ROOT, BYTES, DT, REDOP, PMPI_CALL) ICOLL_BUFS(CALL, OP, ROOT, BYTES, DT, REDOP, none, none, NULL, PMPI_CALL)

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Ibarrier(comm, req);
    uintptr_t pc = PC();
    ICOLL(C_IBARRIER, OP_IBARRIER, -1, 0, MPI_DATATYPE_NULL, RED_NONE, PMPI_Ibarrier(comm, req));
}
int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Ibcast(buf, count, dt, root, comm, req);
    uintptr_t pc = PC();
    int at = me_in(comm) == root;
    ICOLL_BUFS(C_IBCAST, OP_IBCAST, root, bytes_of(count, dt), dt, RED_NONE, at ? side_of(buf, count, dt) : none,
               at ? none : side_of(buf, count, dt), coll_bufs(buf, count, dt, 1, NULL, 0, dt, 0),
               PMPI_Ibcast(buf, count, dt, root, comm, req));
}
int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request *req) {
    if (PASS) return PMPI_Ireduce(sbuf, rbuf, count, dt, op, root, comm, req);
    uintptr_t pc = PC();
    int at = me_in(comm) == root;
    ICOLL_BUFS(C_IREDUCE, OP_IREDUCE, root, bytes_of(count, dt), dt, redop_code(op), side_of(sbuf, count, dt),
               at ? side_of(rbuf, count, dt) : none, red_bufs(sbuf, rbuf, count, dt, at),
               PMPI_Ireduce(sbuf, rbuf, count, dt, op, root, comm, req));
}
int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                   MPI_Request *req) {
    if (PASS) return PMPI_Iallreduce(sbuf, rbuf, count, dt, op, comm, req);
    uintptr_t pc = PC();
    ICOLL_BUFS(C_IALLREDUCE, OP_IALLREDUCE, -1, bytes_of(count, dt), dt, redop_code(op), side_of(sbuf, count, dt),
               side_of(rbuf, count, dt), red_bufs(sbuf, rbuf, count, dt, 1), PMPI_Iallreduce(sbuf, rbuf, count, dt, op, comm, req));
}
int MPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Iscan(sbuf, rbuf, count, dt, op, comm, req);
    uintptr_t pc = PC();
    ICOLL_BUFS(C_ISCAN, OP_ISCAN, -1, bytes_of(count, dt), dt, redop_code(op), side_of(sbuf, count, dt),
               side_of(rbuf, count, dt), red_bufs(sbuf, rbuf, count, dt, 1), PMPI_Iscan(sbuf, rbuf, count, dt, op, comm, req));
}
int MPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Iexscan(sbuf, rbuf, count, dt, op, comm, req);
    uintptr_t pc = PC();
    ICOLL_BUFS(C_IEXSCAN, OP_IEXSCAN, -1, bytes_of(count, dt), dt, redop_code(op), side_of(sbuf, count, dt),
               side_of(rbuf, count, dt), red_bufs(sbuf, rbuf, count, dt, me_in(comm) != 0),
               PMPI_Iexscan(sbuf, rbuf, count, dt, op, comm, req));
}
int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                              MPI_Request *req) {
    if (PASS) return PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm, req);
    uintptr_t pc = PC();
    int64_t all = (int64_t)rcount * size_in(comm); /* the send buffer: a block for each member */
    ICOLL_BUFS(C_IREDUCE_SCATTER_BLOCK, OP_IREDUCE_SCATTER_BLOCK, -1, bytes_of(rcount, dt), dt, redop_code(op),
               side_n(sbuf, rcount, size_in(comm), dt), side_of(rbuf, rcount, dt),
               red_type(dt) ? red_type(dt) : coll_bufs(sbuf, all > INT_MAX ? INT_MAX : (int)all, dt, 1, rbuf, rcount, dt, 1),
               PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm, req));
}
int MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                        MPI_Request *req) {
    if (PASS) return PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, dt, op, comm, req);
    uintptr_t pc = PC();
    int me = me_in(comm);
    int n = rcounts ? size_in(comm) : 0;
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += rcounts[i];
    struct vcounts vc = vc_of(comm, rcounts, dt, NULL, dt);
    ICOLL_FULL(C_IREDUCE_SCATTER, OP_IREDUCE_SCATTER, -1, me >= 0 && rcounts ? bytes_of(rcounts[me], dt) : 0, dt,
               redop_code(op), total <= INT_MAX ? side_of(sbuf, (int)total, dt) : none,
               me >= 0 && rcounts ? side_of(rbuf, rcounts[me], dt) : none, &vc,
               red_type(dt) ? red_type(dt)
                            : coll_bufs(sbuf, vsum(comm, rcounts), dt, 1, rbuf, me >= 0 && rcounts ? rcounts[me] : 0, dt, 1),
               PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, dt, op, comm, req));
}
int MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
    uintptr_t pc = PC();
    int at = me_in(comm) == root;
    ICOLL_BUFS(C_IGATHER, OP_IGATHER, root, at ? bytes_of(rcount, rtype) : bytes_of(scount, stype), at ? rtype : stype,
               RED_NONE, side_of(sbuf, scount, stype), at ? side_n(rbuf, rcount, size_in(comm), rtype) : none,
               coll_bufs(sbuf, scount, stype, 1, rbuf, rcount, rtype, at), PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req));
}
int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
    uintptr_t pc = PC();
    int at = me_in(comm) == root;
    ICOLL_BUFS(C_ISCATTER, OP_ISCATTER, root, at ? bytes_of(scount, stype) : bytes_of(rcount, rtype), at ? stype : rtype,
               RED_NONE, at ? side_n(sbuf, scount, size_in(comm), stype) : none, side_of(rbuf, rcount, rtype),
               coll_bufs(sbuf, scount, stype, at, rbuf, rcount, rtype, 1), PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req));
}
int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
    uintptr_t pc = PC();
    struct vcounts vc = own_send(sbuf, &scount, stype, comm);
    ICOLL_FULL(C_IALLGATHER, OP_IALLGATHER, -1, bytes_of(rcount, rtype), rtype, RED_NONE, side_of(sbuf, scount, stype),
               side_n(rbuf, rcount, size_in(comm), rtype), &vc, coll_bufs(sbuf, scount, stype, 1, rbuf, rcount, rtype, 1),
               PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req));
}
int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
    uintptr_t pc = PC();
    int n = size_in(comm);
    struct vcounts vc = own_send(sbuf, &scount, stype, comm);
    ICOLL_FULL(C_IALLTOALL, OP_IALLTOALL, -1, bytes_of(rcount, rtype), rtype, RED_NONE, side_n(sbuf, scount, n, stype),
               side_n(rbuf, rcount, n, rtype), &vc, coll_bufs(sbuf, scount, stype, 1, rbuf, rcount, rtype, 1),
               PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req));
}
int MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, req);
    uintptr_t pc = PC();
    int me = me_in(comm);
    int inplace = sbuf == MPI_IN_PLACE && me == root && me >= 0 && rcounts;
    struct vcounts vc = vc_of(comm, me == root ? rcounts : NULL, rtype, NULL, rtype);
    ICOLL_FULL(C_IGATHERV, OP_IGATHERV, root, inplace ? bytes_of(rcounts[me], rtype) : bytes_of(scount, stype),
            inplace ? rtype : stype, RED_NONE, side_of(sbuf, scount, stype),
            me == root ? vside(rbuf, comm, rcounts, displs, rtype) : none, &vc,
            coll_bufs(sbuf, scount, stype, 1, rbuf, me == root ? vsum(comm, rcounts) : 0, rtype, me == root),
            PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, req));
}
int MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req);
    uintptr_t pc = PC();
    int me = me_in(comm);
    int inplace = rbuf == MPI_IN_PLACE && me == root && me >= 0 && scounts;
    struct vcounts vc = vc_of(comm, me == root ? scounts : NULL, stype, NULL, stype);
    ICOLL_FULL(C_ISCATTERV, OP_ISCATTERV, root, inplace ? bytes_of(scounts[me], stype) : bytes_of(rcount, rtype),
            inplace ? stype : rtype, RED_NONE, me == root ? vside(sbuf, comm, scounts, displs, stype) : none,
            side_of(rbuf, rcount, rtype), &vc,
            coll_bufs(sbuf, me == root ? vsum(comm, scounts) : 0, stype, me == root, rbuf, rcount, rtype, 1),
            PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req));
}
int MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                    const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req);
    uintptr_t pc = PC();
    int me = sbuf == MPI_IN_PLACE ? me_in(comm) : -1;
    struct vcounts vc = vc_of(comm, rcounts, rtype, NULL, rtype);
    ICOLL_FULL(C_IALLGATHERV, OP_IALLGATHERV, -1, me >= 0 && rcounts ? bytes_of(rcounts[me], rtype) : bytes_of(scount, stype),
            me >= 0 ? rtype : stype, RED_NONE, side_of(sbuf, scount, stype), vside(rbuf, comm, rcounts, displs, rtype), &vc,
            coll_bufs(sbuf, scount, stype, 1, rbuf, vsum(comm, rcounts), rtype, 1),
            PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req));
}
int MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req);
    uintptr_t pc = PC();
    int n = inter(comm) || !rcounts ? 0 : size_in(comm); /* inter: rcounts has the remote size, passed through */
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += rcounts[i];
    struct vcounts vc = sbuf == MPI_IN_PLACE ? vc_of(comm, rcounts, rtype, rcounts, rtype)
                                             : vc_of(comm, scounts, stype, rcounts, rtype);
    if (!vc.b) vc.n = 0;
    ICOLL_FULL(C_IALLTOALLV, OP_IALLTOALLV, -1, bytes_of(total, rtype), rtype, RED_NONE,
            vside(sbuf, comm, scounts, sdispls, stype), vside(rbuf, comm, rcounts, rdispls, rtype), &vc,
            coll_bufs(sbuf, sbuf == MPI_IN_PLACE ? 0 : vsum(comm, scounts), stype, 1, rbuf, vsum(comm, rcounts), rtype, 1),
            PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req));
}

/* ---- nonblocking point-to-point ---- */
typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

/* track records the post of a new request (lock held) and returns its record. */
static void track(int call, int op, uintptr_t pc, uint32_t mod, uint64_t t0, const void *buf, int count,
                  MPI_Datatype dt, int peer, int tag, struct comm *c, MPI_Request *addr, uint64_t hash, struct req *e,
                  int32_t link) {
    struct rec *r = post(call, op, pc, mod, t0, 0);
    if (!r) return;
    int64_t mult = set_envelope(r, c, buf, peer, tag, count, dt);
    r->index = link;
    r->hash = hash;
    r->req = next_req++;
    r->t1 = tnow();
    if (!e) {
        e = req_new(*addr, addr);
        e->dt = keep_type(dt, &e->owned); /* the program may free dt before completion */
    }
    e->id = r->req; e->seq = r->seq; e->op = op; e->dtype = r->dtype; e->active = 1; e->mult = mult; e->cancel = 0;
    e->buf = buf; e->count = count; e->peer = peer; e->tag = tag; e->comm = c; e->hash = hash;
    if (op == OP_IRECV && call != C_IMRECV) watch_add(r->req, r->seq, r->addr, r->span);
    rel_add(r->req, r->seq, r->addr);
    rec_commit(r);
}

static int isend(int call, int op, isend_fn fn, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                 MPI_Comm comm, MPI_Request *req, uintptr_t pc) {
    uint64_t t0 = tnow();
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    enter_call(call, pc, mod);
    uint64_t h = hash_data(buf, count, dt);
    unlock();
    depth++;
    int rc = fn(buf, count, dt, dest, tag, comm, req);
    depth--;
    lock();
    watch_exit();
    if (rc == MPI_SUCCESS) track(call, op, pc, mod, t0, buf, count, dt, dest, tag, comm_get(comm), req, h, NULL, 0);
    unlock();
    return rc;
}
int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Isend(buf, count, dt, dest, tag, comm, req);
    return isend(C_ISEND, OP_ISEND, PMPI_Isend, buf, count, dt, dest, tag, comm, req, PC());
}
int MPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Issend(buf, count, dt, dest, tag, comm, req);
    return isend(C_ISSEND, OP_ISSEND, PMPI_Issend, buf, count, dt, dest, tag, comm, req, PC());
}
int MPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Ibsend(buf, count, dt, dest, tag, comm, req);
    return isend(C_IBSEND, OP_IBSEND, PMPI_Ibsend, buf, count, dt, dest, tag, comm, req, PC());
}
int MPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Irsend(buf, count, dt, dest, tag, comm, req);
    return isend(C_IRSEND, OP_IRSEND, PMPI_Irsend, buf, count, dt, dest, tag, comm, req, PC());
}
int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req) {
    if (PASS) return PMPI_Irecv(buf, count, dt, source, tag, comm, req);
    uintptr_t pc = PC();
    uint64_t t0 = tnow();
    lock();
    int src = source_of(source, comm);
    unlock();
    uint32_t mod = enter_nonblocking(C_IRECV, pc);
    int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, req);
    depth--;
    lock();
    watch_exit();
    if (rc == MPI_SUCCESS) track(C_IRECV, OP_IRECV, pc, mod, t0, buf, count, dt, source, tag, comm_get(comm), req, 0, NULL, 0);
    unlock();
    return rc;
}

/* ---- matched probes (MPI 3.1 sec. 3.8.2) ----
 * MPI_Mprobe, and MPI_Improbe when it sets flag, match a message as a
 * receive would and take it off the matching queues; MPI_Mrecv/MPI_Imrecv
 * receive exactly that message, named by the message handle. The shim
 * records the probe as MPI_Probe/MPI_Iprobe are (an Mprobe counts for
 * P2PTRACE_FORCE_MATCH as a Probe does) and the Mrecv/Imrecv with its buffer
 * and, in its index, the probe's seq + 1 (0: MPI_MESSAGE_NO_PROC, or a
 * message the shim did not see matched); Merge places the receive right
 * after its probe (recorder/mpi/mprobe.go). msgs maps each matched message
 * handle not yet received to its probe (lock held). */
struct msg { MPI_Message h; uint32_t seq; struct comm *comm; };
static struct msg *msgs;
static size_t nmsgs, capmsgs;

static void msg_add(MPI_Message h, uint32_t seq, struct comm *c) {
    if (h == MPI_MESSAGE_NULL || h == MPI_MESSAGE_NO_PROC) return;
    if (nmsgs == capmsgs) {
        size_t n = capmsgs ? capmsgs * 2 : 16;
        struct msg *m = realloc(msgs, n * sizeof *m);
        if (!m) return;
        msgs = m;
        capmsgs = n;
    }
    msgs[nmsgs++] = (struct msg){h, seq, c};
}

/* msg_take removes message h and returns its probe's seq + 1 (0 if none)
 * and communicator. */
static int32_t msg_take(MPI_Message h, struct comm **c) {
    *c = NULL;
    for (size_t i = nmsgs; i-- > 0;) {
        if (msgs[i].h != h) continue;
        int32_t link = (int32_t)msgs[i].seq + 1;
        *c = msgs[i].comm;
        msgs[i] = msgs[--nmsgs];
        return link;
    }
    return 0;
}


int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status) {
    if (PASS) return PMPI_Mprobe(source, tag, comm, msg, status);
    return blocking_probe(C_MPROBE, source, tag, comm, msg, status, PC());
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *status) {
    if (PASS) return PMPI_Improbe(source, tag, comm, flag, msg, status);
    return nonblocking_probe(C_IMPROBE, source, tag, comm, flag, msg, status, PC());
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status) {
    if (PASS) return PMPI_Mrecv(buf, count, dt, msg, status);
    uintptr_t pc = PC();
    MPI_Status mine;
    if (status == MPI_STATUS_IGNORE) status = &mine;
    lock();
    count_call();
    uint64_t t0 = tnow();
    uint32_t mod = module_of(pc);
    enter_call(C_MRECV, pc, mod);
    struct comm *c;
    int noproc = *msg == MPI_MESSAGE_NO_PROC;
    int32_t link = msg_take(*msg, &c);
    struct rec *r = post(C_MRECV, OP_RECV, pc, mod, t0, 0);
    uint32_t seq = 0;
    int ok = r != NULL;
    int64_t mult = 1;
    if (r) {
        mult = set_envelope(r, c, buf, noproc ? MPI_PROC_NULL : MPI_ANY_SOURCE, MPI_ANY_TAG, count, dt);
        r->index = link;
        seq = r->seq;
        rec_commit(r);
    }
    set_state(ST_BLOCKED);
    unlock();
    depth++;
    int rc = PMPI_Mrecv(buf, count, dt, msg, status);
    depth--;
    lock();
    watch_exit();
    if (ok && (r = done(C_MRECV, seq, 0))) { complete_status(r, c, status, buf, dt, 1, mult); rec_commit(r); }
    set_state(ST_RUNNING);
    unlock();
    return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *req) {
    if (PASS) return PMPI_Imrecv(buf, count, dt, msg, req);
    uintptr_t pc = PC();
    uint64_t t0 = tnow();
    MPI_Message h = *msg;
    uint32_t mod = enter_nonblocking(C_IMRECV, pc);
    int rc = PMPI_Imrecv(buf, count, dt, msg, req);
    depth--;
    lock();
    watch_exit();
    struct comm *c;
    int32_t link = msg_take(h, &c);
    if (rc == MPI_SUCCESS)
        track(C_IMRECV, OP_IRECV, pc, mod, t0, buf, count, dt, h == MPI_MESSAGE_NO_PROC ? MPI_PROC_NULL : MPI_ANY_SOURCE,
              MPI_ANY_TAG, c, req, 0, NULL, link);
    unlock();
    return rc;
}

/* ---- persistent requests ---- */
/* persist records the init call of persistent request *addr (lock held): a
 * post that is no trace op, whose req is the request's persistent id, so
 * that the merge can name requests never freed (a request leak). */
static void persist(int call, int op, const void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                    MPI_Request *addr, uintptr_t pc, uint32_t mod, uint64_t t0) {
    struct req *e = req_new(*addr, addr);
    e->persistent = 1; e->active = 0; e->op = op; e->buf = buf; e->count = count;
    e->dt = keep_type(dt, &e->owned); /* the program may free dt while the request lives */
    e->peer = peer; e->tag = tag; e->comm = comm_get(comm); e->dtype = dtype_code(dt);
    struct rec *r = post(call, op, pc, mod, t0, 0);
    if (!r) return;
    e->mult = set_envelope(r, e->comm, buf, peer, tag, count, dt);
    e->dtype = r->dtype;
    r->req = e->pid = next_req++;
    rec_commit(r);
}
#define PERSIST(NAME, PNAME, CALL, OP, BUFT)                                                                \
    int NAME(BUFT buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm, MPI_Request *req) {   \
        if (PASS) return PNAME(buf, count, dt, peer, tag, comm, req);                                      \
        uintptr_t pc = PC();                                                                               \
        uint64_t t0 = tnow();                                                                              \
        uint32_t mod = enter_nonblocking(CALL, pc);                                                        \
        int rc = PNAME(buf, count, dt, peer, tag, comm, req);                                              \
        depth--;                                                                                           \
        if (rc != MPI_SUCCESS) return rc;                                                                  \
        lock();                                                                                            \
        persist(CALL, OP, buf, count, dt, peer, tag, comm, req, pc, mod, t0);                              \
        unlock();                                                                                          \
        return rc;                                                                                         \
    }
PERSIST(MPI_Send_init, PMPI_Send_init, C_SEND_INIT, OP_ISEND, const void *)
PERSIST(MPI_Ssend_init, PMPI_Ssend_init, C_SSEND_INIT, OP_ISSEND, const void *)
PERSIST(MPI_Bsend_init, PMPI_Bsend_init, C_BSEND_INIT, OP_IBSEND, const void *)
PERSIST(MPI_Rsend_init, PMPI_Rsend_init, C_RSEND_INIT, OP_IRSEND, const void *)
PERSIST(MPI_Recv_init, PMPI_Recv_init, C_RECV_INIT, OP_IRECV, void *)

/* start_active finds, for a Start or Startall of the n requests in reqs,
 * one that is active: a persistent request started and not yet completed
 * by a Wait or Test, or one named twice. MPI-3.1 sec. 3.9: "It is
 * erroneous to call MPI_START with a request that is active"; Open MPI
 * does not check it (its ob1 starts a new request and drops the active
 * one). Lock held. */
static struct req *start_active(int n, MPI_Request reqs[]) {
    epoch++;
    for (int i = 0; i < n; i++) {
        MPI_Request h = reqs[i];
        struct req *e = req_pick(h, &reqs[i]);
        if (e && e->persistent && e->active) return e;
        if (e || h == MPI_REQUEST_NULL || !rcap) continue;
        /* none left unpicked: named again in this call, started by the earlier slot */
        for (size_t k = rslot(h); rtab[k].h != MPI_REQUEST_NULL; k = (k + 1) & (rcap - 1))
            if (rtab[k].h == h && rtab[k].persistent && rtab[k].mark == epoch) return &rtab[k];
    }
    return NULL;
}
/* start_refused fails a Start or Startall naming active request e, in the
 * library (depth) since its entry, without starting anything: it raises
 * MPI_ERR_REQUEST on e's communicator as an MPI that checks would, so its
 * handler records and aborts as for the library's own errors (errhandler;
 * under MPI_ERRORS_RETURN the call returns the error). */
static int start_refused(struct req *e) {
    MPI_Comm comm = e->comm && e->comm->h != MPI_COMM_NULL ? e->comm->h : MPI_COMM_WORLD;
    err_why = "a request it starts is active: started and not yet completed by a Wait or Test";
    PMPI_Comm_call_errhandler(comm, MPI_ERR_REQUEST);
    err_why = NULL;
    depth--;
    lock();
    watch_exit();
    unlock();
    return MPI_ERR_REQUEST;
}

/* start_one records the Start of persistent request h (lock held). */
static void start_one(int call, MPI_Request h, MPI_Request *addr, uintptr_t pc, uint32_t mod, uint64_t t0) {
    epoch++;
    struct req *e = req_pick(h, addr);
    if (!e || !e->persistent) return;
    uint64_t hash = e->op == OP_IRECV ? 0 : hash_data(e->buf, e->count, e->dt);
    track(call, e->op, pc, mod, t0, e->buf, e->count, e->dt, e->peer, e->tag, e->comm, addr, hash, e, 0);
    e->persistent = 1;
}
/* start_forced counts the start of persistent request h (in variable addr)
 * when it is a receive from MPI_ANY_SOURCE (source_of) and, when it is the
 * forced one, posts a nonblocking receive from the forced source in its
 * place: *started says so, and the result is that receive's. Lock held. */
static int start_forced(MPI_Request h, MPI_Request *addr, int *started) {
    *started = 0;
    if (force_rank != world_rank) return MPI_SUCCESS;
    epoch++;
    struct req *e = req_pick(h, addr);
    if (!e || !e->persistent || e->op != OP_IRECV || e->peer != MPI_ANY_SOURCE || !e->comm || e->comm->h == MPI_COMM_NULL)
        return MPI_SUCCESS;
    int src = source_of(MPI_ANY_SOURCE, e->comm->h);
    if (src == MPI_ANY_SOURCE) return MPI_SUCCESS;
    *started = 1;
    depth++;
    int rc = PMPI_Irecv((void *)e->buf, e->count, e->dt, src, e->tag, e->comm->h, &e->forced);
    depth--;
    e->has_forced = rc == MPI_SUCCESS;
    return rc;
}

int MPI_Start(MPI_Request *req) {
    if (PASS) return PMPI_Start(req);
    uintptr_t pc = PC();
    uint64_t t0 = tnow();
    MPI_Request h = *req;
    uint32_t mod = enter_nonblocking(C_START, pc);
    int forced;
    lock();
    struct req *bad = start_active(1, req);
    unlock();
    if (bad) return start_refused(bad);
    lock();
    int rc = start_forced(h, req, &forced);
    unlock();
    if (!forced) rc = PMPI_Start(req);
    depth--;
    lock();
    watch_exit();
    if (rc == MPI_SUCCESS) start_one(C_START, h, req, pc, mod, t0);
    unlock();
    return rc;
}
int MPI_Startall(int n, MPI_Request reqs[]) {
    if (PASS) return PMPI_Startall(n, reqs);
    uintptr_t pc = PC();
    uint64_t t0 = tnow();
    uint32_t mod = enter_nonblocking(C_STARTALL, pc);
    lock();
    struct req *bad = start_active(n, reqs);
    unlock();
    if (bad) return start_refused(bad);
    int rc = MPI_SUCCESS;
    if (force_rank == world_rank) { /* one at a time: one of them may be forced */
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
            int forced;
            lock();
            rc = start_forced(reqs[i], &reqs[i], &forced);
            unlock();
            if (!forced) rc = PMPI_Start(&reqs[i]);
        }
    } else {
        rc = PMPI_Startall(n, reqs);
    }
    depth--;
    lock();
    watch_exit();
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < n; i++) start_one(C_STARTALL, reqs[i], &reqs[i], pc, mod, t0);
    unlock();
    return rc;
}

/* ---- completion ---- */
/* complete_req records the completion of the tracked request e with status st
 * and forgets it (a persistent one becomes inactive). Lock held. */
static void complete_req(int call, struct req *e, MPI_Status *st) {
    struct rec *r = done(call, e->seq, 0);
    int cancelled = 0;
    if (e->cancel) { /* its status says whether the cancel took (MPI_Test_cancelled) */
        quiet++;
        if (PMPI_Test_cancelled(st, &cancelled) != MPI_SUCCESS) cancelled = 0;
        quiet--;
        e->cancel = 0;
    }
    if (r) {
        r->req = e->id;
        r->flag = (uint8_t)(cancelled != 0); /* cancelled: it moved no message */
        if (e->op == OP_IRECV) {
            if (!cancelled) complete_status(r, e->comm, st, e->buf, e->dt, 1, e->mult); /* else: no source, tag or data */
        } else {
            r->hash = e->hash ? hash_data(e->buf, e->count, e->dt) : 0;
        }
        rec_commit(r);
    }
    watch_del(e->id); /* an Irecv's buffer, or a nonblocking collective's receive side */
    rel_del(e->id);
    if (e->persistent) e->active = 0;
    else req_del(e);
}

#define SCRATCH 64

/* wait_family handles every Wait/Test call over n requests. */
static int wait_family(int call, int n, MPI_Request *reqs, int *index, int *flag, int *outcount, int *indices,
                       MPI_Status *statuses, int status_ignore, uintptr_t pc) {
    MPI_Request hs_s[SCRATCH];
    MPI_Status st_s[SCRATCH];
    int ix_s[SCRATCH];
    uint64_t id_s[SCRATCH], done_s[SCRATCH];
    int big = n > SCRATCH;
    MPI_Request *hs = big ? malloc(sizeof *hs * n) : hs_s;
    uint64_t *ids = big ? malloc(sizeof *ids * n) : id_s;     /* tracked request id of each slot, 0 if none */
    uint64_t *dids = big ? malloc(sizeof *dids * n) : done_s; /* ids that completed */
    MPI_Status *sts = statuses;
    int *ix = indices;
    if (status_ignore) sts = big ? malloc(sizeof *sts * n) : st_s;
    if (!ix && (call == C_WAITSOME || call == C_TESTSOME)) ix = big ? malloc(sizeof *ix * n) : ix_s;
    int blocking = call == C_WAIT || call == C_WAITALL || call == C_WAITANY || call == C_WAITSOME;
    if (n > 0) memcpy(hs, reqs, sizeof *hs * n);
    uint64_t t0 = tnow();

    lock();
    count_call();
    uint32_t mod = module_of(pc);
    int nact = 0;
    epoch++;
    for (int i = 0; i < n; i++) {
        struct req *e = req_pick(hs[i], &reqs[i]);
        ids[i] = e && e->active ? e->id : 0;
        if (ids[i]) nact++;
    }
    uint32_t seq = 0;
    struct rec *r = NULL;
    int op = 0;
    switch (call) {
    case C_WAIT: op = OP_WAIT; break;
    case C_WAITALL: op = OP_WAITALL; break;
    case C_WAITANY: op = OP_WAITANY; break;
    case C_TEST: op = OP_TEST; break;
    case C_TESTALL: op = OP_TESTALL; break;
    } /* Waitsome, Testany, Testsome: decided by the merge from the outcome */
    /* A wait's post is written before the call (a rank blocked in it shows
     * it), a poll's after, once it is known whether it is recorded at all
     * (poll_thinned); then before the done records of what it completed. */
    if (nact > 0 && blocking && (r = post(call, op, pc, mod, t0, nact))) {
        uint64_t *out = rec_reqs(r);
        int k = 0;
        for (int i = 0; i < n; i++)
            if (ids[i]) out[k++] = ids[i];
        seq = r->seq;
        rec_commit(r);
    }
    enter_call(call, pc, mod);
    if (blocking && nact > 0) set_state(ST_BLOCKED);
    int nsub = 0; /* forced persistent receives stand in for their requests (start_forced) */
    if (force_rank == world_rank)
        for (int i = 0; i < n; i++) {
            struct req *e = ids[i] ? req_find_id(hs[i], ids[i]) : NULL;
            if (e && e->has_forced) { reqs[i] = e->forced; nsub++; }
        }
    unlock();

    depth++;
    int rc = MPI_SUCCESS, one = 0, oc = 0;
    switch (call) {
    case C_WAIT: rc = PMPI_Wait(reqs, sts); break;
    case C_WAITALL: rc = PMPI_Waitall(n, reqs, sts); break;
    case C_WAITANY: rc = PMPI_Waitany(n, reqs, index, sts); break;
    case C_WAITSOME: rc = PMPI_Waitsome(n, reqs, outcount, ix, sts); break;
    case C_TEST: rc = PMPI_Test(reqs, flag, sts); break;
    case C_TESTALL: rc = PMPI_Testall(n, reqs, flag, sts); break;
    case C_TESTANY: rc = PMPI_Testany(n, reqs, index, flag, sts); break;
    case C_TESTSOME: rc = PMPI_Testsome(n, reqs, outcount, ix, sts); break;
    }
    depth--;

    lock();
    if (rc == MPI_SUCCESS && npends > 0) rma_reqs_done(call, pc, n, hs, reqs);
    for (int i = 0; nsub > 0 && i < n; i++) {
        struct req *e = ids[i] ? req_find_id(hs[i], ids[i]) : NULL;
        if (!e || !e->has_forced) continue;
        if (reqs[i] == MPI_REQUEST_NULL) e->has_forced = 0; /* it completed */
        else e->forced = reqs[i];
        reqs[i] = hs[i]; /* the persistent request, inactive or still active */
        nsub--;
    }
    int found = 1; /* a poll of no active request answers at once */
    if (nact > 0) {
        int nd = 0, ridx = -1, fl = 0;
        switch (call) {
        case C_WAIT: case C_WAITALL: fl = 1; break;
        case C_TEST: case C_TESTALL: fl = *flag != 0; break;
        case C_WAITANY: fl = *index != MPI_UNDEFINED; one = *index; break;
        case C_TESTANY: fl = *flag && *index != MPI_UNDEFINED; one = *index; break;
        case C_WAITSOME: case C_TESTSOME: oc = *outcount == MPI_UNDEFINED ? 0 : *outcount; fl = oc > 0; break;
        }
        found = rc != MPI_SUCCESS || fl;
        int recorded = blocking;
        if (!blocking && (found || !poll_thinned(call, pc, key_of(ids, n)))) {
            recorded = 1;
            if ((r = post(call, op, pc, mod, t0, nact))) {
                uint64_t *out = rec_reqs(r);
                int k = 0;
                for (int i = 0; i < n; i++)
                    if (ids[i]) out[k++] = ids[i];
                seq = r->seq;
                rec_commit(r);
            }
        }
        if (rc == MPI_SUCCESS && fl) {
            if (call == C_WAITANY || call == C_TESTANY) {
                struct req *e = one >= 0 && one < n && ids[one] ? req_find_id(hs[one], ids[one]) : NULL;
                if (e) {
                    ridx = 0;
                    for (int i = 0; i < one; i++) ridx += ids[i] != 0;
                    dids[nd++] = e->id;
                    complete_req(call, e, &sts[0]); /* the single status of Waitany/Testany */
                }
            } else if (call == C_WAITSOME || call == C_TESTSOME) {
                for (int j = 0; j < oc; j++) {
                    int i = ix[j];
                    struct req *e = i >= 0 && i < n && ids[i] ? req_find_id(hs[i], ids[i]) : NULL;
                    if (e) { dids[nd++] = e->id; complete_req(call, e, &sts[j]); }
                }
            } else {
                for (int i = 0; i < n; i++) {
                    struct req *e = ids[i] ? req_find_id(hs[i], ids[i]) : NULL;
                    if (e) { dids[nd++] = e->id; complete_req(call, e, &sts[i]); }
                }
            }
        }
        int report = call == C_WAITSOME || call == C_TESTSOME || call == C_TESTANY;
        if (recorded && (r = done(call, seq, report ? nd : 0))) {
            r->flag = fl;
            r->index = ridx;
            if (report && nd > 0) memcpy(rec_reqs(r), dids, sizeof *dids * nd);
            rec_commit(r);
        }
        if (blocking) set_state(ST_RUNNING);
    }
    if (!blocking) note_poll(found);
    watch_exit();
    unlock();
    if (big) { free(hs); free(ids); free(dids); }
    if (status_ignore && sts != st_s) free(sts);
    if (ix != indices && ix != ix_s) free(ix);
    return rc;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
    if (PASS) return PMPI_Wait(req, status);
    return wait_family(C_WAIT, 1, req, NULL, NULL, NULL, NULL, status, status == MPI_STATUS_IGNORE, PC());
}
int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    if (PASS) return PMPI_Waitall(n, reqs, statuses);
    return wait_family(C_WAITALL, n, reqs, NULL, NULL, NULL, NULL, statuses, statuses == MPI_STATUSES_IGNORE, PC());
}
int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
    if (PASS) return PMPI_Waitany(n, reqs, index, status);
    return wait_family(C_WAITANY, n, reqs, index, NULL, NULL, NULL, status, status == MPI_STATUS_IGNORE, PC());
}
int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (PASS) return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
    return wait_family(C_WAITSOME, n, reqs, NULL, NULL, outcount, indices, statuses, statuses == MPI_STATUSES_IGNORE, PC());
}
/* MPI_Request_get_status (MPI-3.1 sec. 3.7.3) polls a request without
 * retiring it. A poll that finds a tracked request pending is recorded as a
 * fruitless MPI_Test of it (which changes nothing either); one that finds it
 * complete is not recorded: the Wait, Test or Free that retires the request
 * is, so the replay follows the program. Each counts as a poll for the hang
 * monitor (note_poll): a loop of them that never finds its request complete
 * is a livelock, ended as hung and named at this call. */
int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status) {
    if (PASS) return PMPI_Request_get_status(req, flag, status);
    uintptr_t pc = PC();
    uint64_t t0 = tnow();
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    enter_call(C_REQUEST_GET_STATUS, pc, mod);
    epoch++;
    struct req *e = req_pick(req, NULL); /* by value: the program's variable is unknown */
    uint64_t id = e && e->active ? e->id : 0;
    unlock();
    depth++;
    int rc = PMPI_Request_get_status(req, flag, status);
    depth--;
    lock();
    int found = rc != MPI_SUCCESS || *flag;
    if (!found && id && !poll_thinned(C_REQUEST_GET_STATUS, pc, id)) {
        struct rec *r = post(C_REQUEST_GET_STATUS, OP_TEST, pc, mod, t0, 1);
        if (r) {
            rec_reqs(r)[0] = id;
            uint32_t seq = r->seq;
            rec_commit(r);
            if ((r = done(C_REQUEST_GET_STATUS, seq, 0))) { r->flag = 0; r->index = -1; rec_commit(r); }
        }
    }
    note_poll(found);
    watch_exit();
    unlock();
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
    if (PASS) return PMPI_Test(req, flag, status);
    return wait_family(C_TEST, 1, req, NULL, flag, NULL, NULL, status, status == MPI_STATUS_IGNORE, PC());
}
int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
    if (PASS) return PMPI_Testall(n, reqs, flag, statuses);
    return wait_family(C_TESTALL, n, reqs, NULL, flag, NULL, NULL, statuses, statuses == MPI_STATUSES_IGNORE, PC());
}
int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
    if (PASS) return PMPI_Testany(n, reqs, index, flag, status);
    return wait_family(C_TESTANY, n, reqs, index, flag, NULL, NULL, status, status == MPI_STATUS_IGNORE, PC());
}
int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (PASS) return PMPI_Testsome(n, reqs, outcount, indices, statuses);
    return wait_family(C_TESTSOME, n, reqs, NULL, NULL, outcount, indices, statuses, statuses == MPI_STATUSES_IGNORE, PC());
}

/* MPI_Cancel records a Cancel op naming the active request it marks for
 * cancellation (none when the request is not one the shim tracks as
 * active: nothing to replay). Whether the cancel took is known only when
 * the request completes: complete_req asks the completion's status (the
 * shim's own when the program passes MPI_STATUS_IGNORE) and records it on
 * the request's done. A forced persistent receive cancels what stands in
 * for it (start_forced). */
int MPI_Cancel(MPI_Request *req) {
    if (PASS) return PMPI_Cancel(req);
    uintptr_t pc = PC();
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    enter_call(C_CANCEL, pc, mod);
    epoch++;
    struct req *e = req_pick(*req, req);
    int on = e && e->active;
    MPI_Request forced = MPI_REQUEST_NULL;
    struct rec *r = post(C_CANCEL, OP_CANCEL, pc, mod, tnow(), on ? 1 : 0);
    uint32_t seq = 0;
    int ok = r != NULL;
    if (r) {
        if (on) rec_reqs(r)[0] = e->id;
        seq = r->seq;
        rec_commit(r);
    }
    if (on) {
        e->cancel = 1;
        if (e->has_forced) forced = e->forced;
    }
    unlock();
    depth++;
    int rc = PMPI_Cancel(forced != MPI_REQUEST_NULL ? &forced : req);
    depth--;
    lock();
    watch_exit();
    if (ok && (r = done(C_CANCEL, seq, 0))) rec_commit(r);
    unlock();
    return rc;
}

/* MPI_Request_free records the free of an active request (a Free op; its
 * done's flag says the request is persistent: freed while active whatever
 * the replay's timing) and of a persistent one (a post with no trace op
 * whose req is the persistent id: the merge sees it freed). */
int MPI_Request_free(MPI_Request *req) {
    if (PASS) return PMPI_Request_free(req);
    uintptr_t pc = PC();
    MPI_Request h = *req;
    lock();
    count_call();
    uint32_t mod = module_of(pc);
    enter_call(C_REQUEST_FREE, pc, mod);
    epoch++;
    struct req *e = req_pick(h, req);
    MPI_Request forced = MPI_REQUEST_NULL;
    /* A freed access's request says nothing more: its origin buffer stays
     * the library's until the epoch's end completes it (rma_done), and the
     * handle may come back for another request. */
    for (int j = 0; j < npends; j++)
        if (pends[j].req == h) pends[j].req = MPI_REQUEST_NULL;
    if (e) {
        if (e->has_forced) forced = e->forced;
        if (e->active) {
            watch_del(e->id);
            rel_del(e->id);
            struct rec *r = post(C_REQUEST_FREE, OP_FREE, pc, mod, tnow(), 1);
            if (r) {
                rec_reqs(r)[0] = e->id;
                r->req = e->pid;
                uint32_t seq = r->seq;
                rec_commit(r);
                if ((r = done(C_REQUEST_FREE, seq, 0))) { r->flag = e->persistent; rec_commit(r); }
            }
        } else if (e->persistent) {
            struct rec *r = post(C_REQUEST_FREE, 0, pc, mod, tnow(), 0);
            if (r) { r->req = e->pid; rec_commit(r); }
        }
        req_del(e);
    }
    unlock();
    depth++;
    int rc = PMPI_Request_free(req);
    if (forced != MPI_REQUEST_NULL) PMPI_Request_free(&forced); /* what stood in for it (start_forced) */
    depth--;
    return rc;
}
