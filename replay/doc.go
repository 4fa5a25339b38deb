// Package replay reruns a recorded trace deterministically on the engine of
// package gpu/sim, under injected faults, and says what went wrong.
//
// A trace (OpenTrace, or an in-memory Events or Collector) is a sequence of
// calls per rank. Replay drives the engine with one cursor per rank, no
// goroutines: each rank makes its recorded calls until one blocks, and the
// engine's scheduler decides, by virtual time and the seed, who runs next.
// The same trace, faults and seed give the same outcome, byte for byte.
//
// What a replay finds is explained in package verdict's terms (Explain):
// the engine's problems (deadlock, hang, truncation, missing Wait, ...),
// corrupted data under the mutate fault, and message races (an AnySource
// receive that matched another sender than when recorded). A finding says
// whether an injected fault explains it (cause fault) or it is the program's
// latent bug (cause program).
//
// Check runs the standard battery: as recorded, sync (zero buffering),
// mutate (send buffers read at the latest legal moment), delay over
// DelaySeeds seeds, every alternative match of each AnySource receive
// (a ForcedMatch per replay, at most MaxForcedReplays), and each ready send
// with the rank of its receive held back just before the receive (a
// HeldPost per replay, at most MaxHeldReplays): MPI-3.1 sec. 3.4 wants the
// receive posted before the send starts whatever the timing, and a held
// replay shows a send that only the timing ordered. CheckTrace adds the
// findings the recording itself made (stored in the trace header) and, for
// a trace cut short, where each rank's record ends: a rank whose record ends
// before its Finalize stops there, and what it had pending is not a finding.
//
// The same code serves every door: p2ptrace replay and check, the merge of
// an MPI job (recorder), and the harness's check of the runs of a go test.
package replay
