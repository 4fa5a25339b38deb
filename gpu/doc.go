// Package gpu is the runtime that multi-rank programs are written against:
// MPI-style Send/Recv/Isend/Irecv/Wait with tags and wildcards, NCCL-style
// stream send/recv with groups, and device buffers. Its backend is a
// deterministic simulation: every rank is a goroutine, exactly one runs at a
// time, and it hands control to the engine (package gpu/sim) at every call.
// A virtual clock orders everything; a seeded scheduler breaks ties. The same
// program and seed always give the same order of events and the same errors.
//
//	err := gpu.Launch(2, func(r *gpu.Rank) error {
//		buf := r.Alloc(gpu.Float32, 1024)
//		if r.ID() == 0 {
//			return r.Send(buf, 1, 0)
//		}
//		_, err := r.Recv(buf, 0, 0)
//		return err
//	})
//
// When no rank can progress and nothing is in flight, the run is stuck:
// Launch stops it at once, every blocked call returns an error wrapping
// ErrStuck, and Launch's error names each blocked rank, its call, peer, tag
// and file:line, with the wait-for cycle (a deadlock) or the rank waited on
// (a hang) and the nearest unmatched candidate.
//
// # Semantics
//
// MPI style:
//
//   - Envelope = (source, tag, communicator). Receives may use AnySource and AnyTag.
//   - Non-overtaking: messages from one sender to one receiver that match the
//     same receive are matched in the order sent; receives are matched in the
//     order posted. (TestNonOvertaking, TestReceivesMatchInPostOrder)
//   - An AnySource receive with several candidates takes the one whose
//     envelope arrived first in virtual time; ties go to the seeded scheduler.
//     (TestWildcardMatching, TestAnySourceTieIsSeeded)
//   - Modes. Standard: eager (completes locally) up to the eager limit
//     (EagerLimit, default 64 KiB), rendezvous above it. Synchronous (Ssend):
//     completes only once the matching receive started. Buffered (Bsend):
//     always completes locally. Ready (Rsend): erroneous unless the receive is
//     already posted; reported as ready-without-recv. (TestEagerVsRendezvous,
//     TestSynchronousMode, TestBufferedModeCompletesLocally, TestReadySendWithoutReceive)
//   - Eager sends copy the buffer at post. Rendezvous reads the send buffer
//     when the transfer starts (the match), not when it was posted; under the
//     mutate fault it reads it at the latest legal moment, the send's
//     completion, so a buffer rewritten before Wait reaches the receiver.
//   - A receive buffer smaller than the message is a truncation: the receive
//     returns ErrTruncated. Datatypes that differ between the two ends are a
//     type-mismatch. (TestTruncation, TestDatatypeMismatch)
//   - Requests: Wait, Waitall, Waitany, Test, Testall, Request.Free. Freeing an
//     active send's request is legitimate (MPI-3.1 sec. 3.7.3): the message
//     is still delivered. Freeing an active receive's or nonblocking
//     collective's, or finishing with requests never waited, is a
//     missing-wait. (TestRequestFreeWhileActive, TestRequestNeverWaited)
//   - Request.Cancel (MPI_Cancel) takes only while the op is unmatched: the
//     op completes at once, Status.Cancelled; else it completes normally.
//     The request must still be waited. (TestRequestCancel,
//     TestRequestCancelledNeverWaited; the rules: gpu/sim/cancel.go)
//   - Rank.BufferAttach / BufferDetach (MPI_Buffer_attach/detach): from a
//     rank's first attach on, a Bsend must fit, with its rank's buffered
//     messages not yet received, in the attached bytes (no overhead), else
//     bsend-buffer; a detach waits until they are received (never: a hang);
//     a second attach is an invalid call. A rank that never attaches keeps
//     Bsend unlimited, as before. (TestBufferAttachBsend,
//     TestBufferDetachBlocks, TestBufferAttachTwice; the rules:
//     gpu/sim/bsend.go)
//   - Sendrecv posts both halves at once. A rank returning from its function
//     is Finalize: what it left pending is reported; sends nobody received
//     are unmatched-send. (TestSendrecvPostsBothHalves, TestUnmatchedSendAtFinalize)
//   - Barrier (Rank.Barrier over the world; replayed MPI traces also name a
//     communicator and its size): the k-th barrier of a rank on a comm waits
//     until that many ranks entered their k-th barrier on it; all leave at the
//     latest arrival plus the link latency. A member that finishes instead
//     leaves the others stuck, waiting on it.
//     (TestBarrierReleasesAllAtLatestArrivalPlusLatency,
//     TestBarrierWithFinalizedMemberIsStuckAndNamed, TestBarrierAgainstRecvIsDeadlock)
//   - The other collectives (replayed MPI traces: Bcast ... Exscan) match the
//     same way, the k-th of each member on a comm, and complete when the
//     members their data depends on entered (a Bcast's non-root waits for
//     the root, a Reduce's root for all, a Scan's rank i for those below
//     it, the all-to-all kinds all for all); under sync every one waits for
//     all. Members whose k-th calls differ in kind, root or size are a
//     collective-mismatch. (TestCollectiveDependencyRules,
//     TestCollectiveOrderDeadlocksOnlyUnderSync, TestCollectiveMismatch,
//     TestStuckCollectiveWaitsOnItsDependencies)
//   - Probe (replayed MPI traces) waits, like a receive with the same
//     envelope rule, until a matching message has arrived unmatched, and does
//     not consume it; Iprobe never waits.
//     (TestProbeWaitsForTheMessageWithoutConsumingIt,
//     TestProbeNeverSatisfiedIsHangWithCandidate, TestIprobeDoesNotBlock)
//   - Livelock is a hang: a rank whose polls (Test, Testall; Iprobe in MPI
//     traces) find nothing PollLimit times in a row (default
//     sim.DefaultPollLimit, 1000; Compute between polls does not count as a
//     change) waits until something changes the world (a post, an arrival, a
//     completion) and then polls again. If nothing can, the run ends as a
//     hang naming each polling rank, what it polls and the poll's line.
//     Parking changes no answer, only the poller's virtual time.
//     (TestPollingLivelockIsHang, TestSlowSenderPollsAreNotHang,
//     sim.TestIprobeLivelockIsHang)
//
// NCCL style:
//
//   - Stream.Send and Stream.Recv are enqueued and return at once. The
//     stream cannot pass one until the peer has enqueued the matching op and
//     the transfer is done. Per (sender, receiver) the i-th send matches the
//     i-th recv; counts must agree (count-mismatch). Head-to-head sends
//     outside a group hang at any size. (TestStreamBlocking,
//     TestStreamMatchesInOrderPerPair, TestStreamCountMismatch)
//   - Ops between GroupStart and GroupEnd progress together. (TestGroupProgress)
//   - Stream.Synchronize blocks the host until the stream drains; a rank
//     that finishes with stream work pending is a missing-wait.
//
// Time: each rank has a virtual clock. A transfer of n bytes costs
// latency + n/bandwidth (Link; defaults 2us and 25 GB/s). Compute(d) declares
// device work. Calls themselves take no virtual time.
//
// A rank blocked outside the runtime (on a channel of its own) cannot be seen
// by the engine; a wall-clock watchdog (WallTimeout, default 30s) ends Launch
// with ErrWatchdog and abandons that goroutine. RunTimeout bounds the whole
// run (harness.Timeout sets it). Both end with a no-progress Problem naming
// the rank that ran and its last runtime call. Go cannot stop a goroutine
// that spins in its own code: it and the other ranks' goroutines are left
// until it next calls the runtime, when all of them return; ranks that still
// call the runtime unwind before Launch returns.
package gpu
