package scenariotest

// The MPI scenarios: real MPI C programs under testdata/mpi (one file per
// program, plain C99 + MPI), and the verdicts p2ptrace must give them when it
// records them under OpenMPI and checks their traces. The Go programs of
// testdata/train are the model: same rows of SCENARIOS.md, same culprit
// markers ("// culprit: MARKER" at the end of a line), and the same kinds and
// ranks that replay/verdicts_test.go and gpu/scenarios_test.go pin for them,
// plus what real MPI codes do beyond them (persistent requests, Waitany,
// Testall, Sendrecv_replace, sub-communicators, MPI errors, MPI_Abort) and a
// fixed version of every bug so that each pattern has a no-findings case.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/p2ptrace/p2ptrace/verdict"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/internal/proc"
	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Trace statuses of a recording, as strings.
const (
	StatusComplete = string(trace.StatusComplete)
	StatusHung     = string(trace.StatusHung)
	StatusCrashed  = string(trace.StatusCrashed)
)

// What a program does under plain mpirun, without p2ptrace (MPIScenario.Plain).
const (
	// PlainOK: exits 0 and prints a line starting with "NAME: ok".
	PlainOK = "ok"
	// PlainFail: exits with status PlainExit (its own check failed, an MPI
	// error under MPI_ERRORS_ARE_FATAL, or MPI_Abort).
	PlainFail = "fail"
	// PlainHang: still running when killed (the tests give it a few seconds).
	PlainHang = "hang"
	// PlainOKOrFail: either, depending on the transport; see the scenario.
	PlainOKOrFail = "ok-or-fail"
)

// MPIScenario is one program of testdata/mpi and the verdicts p2ptrace must give it.
type MPIScenario struct {
	Name  string // testdata/mpi/NAME.c
	Ranks int
	Args  []string
	// Record is what `p2ptrace record -n Ranks` says: the trace status
	// ("complete", "hung", "crashed") and, for hung/crashed, the finding kind
	// and the culprit markers. A complete recording that reports a finding of
	// its own (unmatched-send or missing-wait at MPI_Finalize,
	// in-flight-mutation from the payload hashes) has that Kind too, with the
	// union of the ranks and markers of its findings of that kind. Kind ""
	// with status crashed: the program aborted itself (MPI_Abort), no p2p
	// finding; Ranks and Markers then name the aborting call.
	Record MPIVerdict
	// RecordAlso are the recording's findings of kinds other than
	// Record's that check does not find (a bug of its own, which only
	// the recording sees): every other finding of the recording must be
	// here or in Check, so that one bug gets one finding.
	RecordAlso []MPIVerdict
	// Check is what `p2ptrace check` (as recorded, sync, mutate, delay,
	// AnySource alternatives) must find; empty means no findings. One entry
	// per finding after check's deduplication (kind + ops), in the order
	// check lists them (as recorded first, then sync, mutate, delay);
	// compare them as a set. The recording's own findings (Record) are not
	// among them: for a crashed trace, empty means the replays add nothing. Status is unused here; Under says which replay
	// of the battery shows it first.
	Check []MPIVerdict
	// Plain is what plain `mpirun -n Ranks NAME Args...` did (no p2ptrace),
	// as observed with OpenMPI 4.1.4 (Debian), shared memory (vader) on one
	// node: PlainOK, PlainFail (exit status PlainExit), PlainHang or
	// PlainOKOrFail.
	Plain     string
	PlainExit int
	// FixOf names the buggy program this one is the fixed version of ("" if none).
	FixOf string
	// Unchecked: the program makes an invalid call its MPI library does
	// not detect (Open MPI: MPI_Start of an active request, a one-sided
	// access whose sides differ in size or whose buffer is NULL, a window
	// freed inside an epoch), so plain
	// mpirun is ok (or hangs), while the recording fails the call as an MPI
	// that checks would (under MPI_ERRORS_ARE_FATAL: crashed, invalid-call
	// or truncation).
	Unchecked bool
}

// MPIVerdict is a trace status and/or one finding: its kind, the ranks it
// names (world ranks, in the order p2ptrace gives them) and the culprit
// markers of its ops: the distinct "// culprit: MARKER" lines its ops' call
// sites fall on (two ranks blocked on the same line give one marker).
type MPIVerdict struct {
	Status  string
	Kind    verdict.Kind
	Ranks   []int
	Markers []string
	// Under (Check only): the replay of check's battery that first shows the
	// finding: "" as recorded, "sync", "mutate", "delay" (a seed, or one
	// rank's messages delayed so that AnySource receives see their other
	// candidates).
	Under string
}

// ID names a scenario uniquely: NAME, or NAME_ARG1_ARG2 with its arguments.
func (s MPIScenario) ID() string {
	return strings.Join(append([]string{s.Name}, s.Args...), "_")
}

// Clean says whether check must find nothing.
func (s MPIScenario) Clean() bool { return len(s.Check) == 0 }

// MatchRanks compares the ranks of a finding with the verdict's: equal, except
// for message-race, whose ranks are the receiver then the recorded and the
// replayed sender, which depend on who won the race when recorded: the
// receiver must be equal and the senders the same set.
func (v MPIVerdict) MatchRanks(got []int) bool {
	if v.Kind != verdict.MessageRace {
		return slices.Equal(got, v.Ranks)
	}
	if len(got) != len(v.Ranks) || len(got) == 0 || got[0] != v.Ranks[0] {
		return false
	}
	return slices.Equal(slices.Sorted(slices.Values(got[1:])), slices.Sorted(slices.Values(v.Ranks[1:])))
}

func rec(status string, kind verdict.Kind, ranks []int, markers ...string) MPIVerdict {
	return MPIVerdict{Status: status, Kind: kind, Ranks: ranks, Markers: markers}
}

func find(under string, kind verdict.Kind, ranks []int, markers ...string) MPIVerdict {
	return MPIVerdict{Kind: kind, Ranks: ranks, Markers: markers, Under: under}
}

var complete = MPIVerdict{Status: StatusComplete}

// MPIScenarios is every program of testdata/mpi with its arguments and verdicts.
var MPIScenarios = []MPIScenario{
	// pingpong: large (default) and small; clean under every fault of check.
	{Name: "pingpong", Ranks: 2, Record: complete, Plain: PlainOK},
	{Name: "pingpong", Ranks: 2, Args: []string{"small"}, Record: complete, Plain: PlainOK},

	// headtohead-small: eager buffering hides the unsafe order; sync (zero
	// buffering) shows the deadlock, and each blocked standard Send is
	// unsafe buffering.
	{Name: "headtohead-small", Ranks: 2, Record: complete, Plain: PlainOK,
		Check: []MPIVerdict{
			find("sync", verdict.Deadlock, []int{0, 1}, "send-a", "send-b"),
			find("sync", verdict.UnsafeBuffering, []int{0, 1}, "send-a"),
			find("sync", verdict.UnsafeBuffering, []int{1, 0}, "send-b"),
		}},
	// headtohead-large: rendezvous, the deadlock is real and found at once
	// (the sends are stuck as recorded: no unsafe-buffering of them under
	// sync, which would say the same bug again).
	{Name: "headtohead-large", Ranks: 2, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Deadlock, []int{0, 1}, "send-a", "send-b"),
		Check: []MPIVerdict{
			find("", verdict.Deadlock, []int{0, 1}, "send-a", "send-b"),
		}},
	{Name: "headtohead-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "headtohead-large"},
	{Name: "headtohead-fixed", Ranks: 2, Args: []string{"small"}, Record: complete, Plain: PlainOK, FixOf: "headtohead-small"},
	{Name: "ordered-exchange", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "headtohead-large"},
	{Name: "sendrecv-exchange", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "headtohead-large"},

	// recv-recv: both ranks block in MPI_Recv: a deadlock at any size, the
	// same under sync (no send is blocked, so no unsafe buffering).
	{Name: "recv-recv", Ranks: 2, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Deadlock, []int{0, 1}, "recv-a", "recv-b"),
		Check: []MPIVerdict{
			find("", verdict.Deadlock, []int{0, 1}, "recv-a", "recv-b"),
		}},
	{Name: "recv-recv-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "recv-recv"},

	// wrong-rank: rank 1 waits for a message rank 0 sent to rank 2. Under
	// sync rank 0's Send to rank 2 blocks too (rank 2 never receives): the
	// same bug, so check reports the hang as recorded alone (SCENARIOS.md:
	// the replay's verdict is the recording's).
	{Name: "wrong-rank", Ranks: 3, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Hang, []int{1}, "recv"),
		Check: []MPIVerdict{
			find("", verdict.Hang, []int{1}, "recv"),
		}},
	{Name: "wrong-rank-fixed", Ranks: 3, Record: complete, Plain: PlainOK, FixOf: "wrong-rank"},

	// wrong-tag: rank 1 waits for tag 1, rank 0 sent tag 0 (the nearest
	// candidate). Under sync rank 0's Send waits on rank 1 and rank 1 on
	// rank 0, a deadlock of the same bug: the hang as recorded alone.
	{Name: "wrong-tag", Ranks: 2, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Hang, []int{1}, "recv"),
		Check: []MPIVerdict{
			find("", verdict.Hang, []int{1}, "recv"),
		}},
	{Name: "wrong-tag-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "wrong-tag"},

	// poll-livelock: rank 0 polls (MPI_Test, 1 ms apart) a receive of tag 3
	// that rank 1, which sent tag 2 and finalized, never sends: a livelock.
	// The recorder's monitor counts the polling rank as blocked and ends the
	// job; the replay parks the poller (sim.DefaultPollLimit) and reports the
	// hang at the MPI_Test. Under sync rank 1's Send blocks as well: the
	// same bug, reported once.
	{Name: "poll-livelock", Ranks: 2, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Hang, []int{0}, "test"),
		Check: []MPIVerdict{
			find("", verdict.Hang, []int{0}, "test"),
		}},
	{Name: "poll-livelock-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "poll-livelock"},
	// get-status: the same livelock polled with MPI_Request_get_status,
	// which the shim records as a fruitless MPI_Test while the request is
	// pending (and counts as a poll): hung at that line, not run until the
	// job's timeout.
	{Name: "poll-livelock", Ranks: 2, Args: []string{"get-status"}, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Hang, []int{0}, "get-status"),
		Check: []MPIVerdict{
			find("", verdict.Hang, []int{0}, "get-status"),
		}},
	{Name: "poll-livelock-fixed", Ranks: 2, Args: []string{"get-status"}, Record: complete, Plain: PlainOK, FixOf: "poll-livelock"},
	// busy: polled with MPI_Testany in a tight loop, millions of calls a
	// second: the shim records a few of each run of fruitless polls (the
	// segment grew by hundreds of MB a second and the merge took minutes),
	// and the job is hung at the MPI_Testany line as soon as the monitor
	// sees it.
	{Name: "poll-livelock", Ranks: 2, Args: []string{"busy"}, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Hang, []int{0}, "testany"),
		Check: []MPIVerdict{
			find("", verdict.Hang, []int{0}, "testany"),
		}},
	{Name: "poll-livelock-fixed", Ranks: 2, Args: []string{"busy"}, Record: complete, Plain: PlainOK, FixOf: "poll-livelock"},

	// send-no-recv: large: the rendezvous Send hangs; small: the eager Send
	// completes and is unmatched at MPI_Finalize (under sync it hangs).
	{Name: "send-no-recv", Ranks: 2, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Hang, []int{0}, "send"),
		Check: []MPIVerdict{
			find("", verdict.Hang, []int{0}, "send"),
		}},
	{Name: "send-no-recv", Ranks: 2, Args: []string{"small"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.UnmatchedSend, []int{0, 1}, "send"),
		Check: []MPIVerdict{
			find("", verdict.UnmatchedSend, []int{0, 1}, "send"),
			find("sync", verdict.Hang, []int{0}, "send"),
		}},
	{Name: "send-no-recv-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "send-no-recv"},
	{Name: "send-no-recv-fixed", Ranks: 2, Args: []string{"small"}, Record: complete, Plain: PlainOK, FixOf: "send-no-recv"},

	// isend-mutate: the recording's payload hashes differ between post and
	// completion; replayed under mutate, rank 1 receives the written data,
	// which was written between the Isend and its Wait (both named).
	// Plain mpirun: with vader's single-copy mechanism CMA (the default
	// here) rank 1 reads rank 0's buffer with process_vm_readv after the
	// write and its own check fails (exit 1, every run); with
	// btl_vader_single_copy_mechanism=none the first fragment (which holds
	// element 0) is copied during MPI_Isend and the program passes.
	{Name: "isend-mutate", Ranks: 2, Plain: PlainOKOrFail, PlainExit: 1,
		Record: rec(StatusComplete, verdict.InFlightMutation, []int{0}, "isend"),
		Check: []MPIVerdict{
			find("mutate", verdict.CorruptedData, []int{1, 0}, "recv", "isend", "wait"),
		}},
	{Name: "isend-mutate-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "isend-mutate"},

	// isend-nowait: leak: rank 0's Isend and rank 1's Irecv never waited;
	// free: rank 1 frees its active Irecv's request (a missing Wait: freeing
	// an active send is legitimate, MPI-3.1 sec. 3.7.3, request-free-active).
	{Name: "isend-nowait", Ranks: 2, Args: []string{"leak"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.MissingWait, []int{0, 1}, "leak-isend", "leak-irecv"),
		Check: []MPIVerdict{
			find("", verdict.MissingWait, []int{0}, "leak-isend"),
			find("", verdict.MissingWait, []int{1}, "leak-irecv"),
		}},
	{Name: "isend-nowait", Ranks: 2, Args: []string{"free"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.MissingWait, []int{1}, "free-irecv", "free"),
		Check: []MPIVerdict{
			find("", verdict.MissingWait, []int{1}, "free-irecv", "free"),
		}},
	{Name: "isend-nowait-fixed", Ranks: 2, Args: []string{"leak"}, Record: complete, Plain: PlainOK, FixOf: "isend-nowait"},
	{Name: "isend-nowait-fixed", Ranks: 2, Args: []string{"free"}, Record: complete, Plain: PlainOK, FixOf: "isend-nowait"},

	// irecv-read-early: the early read is a plain load, not an MPI call: no
	// trace shows it, the trace itself (Irecv, then Wait) is correct. Plain
	// mpirun: OpenMPI's ob1 does not progress inside MPI_Irecv, so the
	// message (sent 1 ms earlier) is still in the shared-memory FIFO, the
	// read sees the old value and the program's own check fails (exit 1,
	// every run), unlike the Go version where the data has landed. (Rank 0
	// sends once rank 1 said it is past MPI_Init, whose progress took the
	// message in on a loaded machine: then the Irecv matched it, once in
	// CI.) The
	// recording completes; the program's failure is its exit status.
	{Name: "irecv-read-early", Ranks: 2, Record: complete, Plain: PlainFail, PlainExit: 1},
	{Name: "irecv-read-early-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "irecv-read-early"},

	// matrix-scatter: 3 transfers of 1 MiB, clean under sync and delay.
	{Name: "matrix-scatter", Ranks: 4, Record: complete, Plain: PlainOK},

	// pipeline-chunks: 10 chunks: the Isends of chunks 8 and 9 are never
	// waited: one missing-wait finding (same rank, same line: one bug, in
	// the recording as in check); 8 chunks: clean.
	{Name: "pipeline-chunks", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.MissingWait, []int{0}, "isend"),
		Check: []MPIVerdict{
			find("", verdict.MissingWait, []int{0}, "isend"),
		}},
	{Name: "pipeline-chunks", Ranks: 2, Args: []string{"8"}, Record: complete, Plain: PlainOK},
	{Name: "pipeline-chunks-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "pipeline-chunks"},

	// anysource-race: rank 0's AnySource receive can match either sender,
	// and the program is correct whatever the order: the model replays the
	// other order cleanly, so only a re-run can judge it: check re-runs the
	// job with the match forced, it runs clean, a note and no finding
	// (recorder's TestMPIRaceJudgedByRerunningTheJob; the battery alone,
	// as here, leaves it an unconfirmed note).
	{Name: "anysource-race", Ranks: 3, Record: complete, Plain: PlainOK},
	{Name: "anysource-race-fixed", Ranks: 3, Record: complete, Plain: PlainOK, FixOf: "anysource-race"},
	// anysource-irecv-pair: two nonblocking receives from MPI_ANY_SOURCE,
	// either taking either message: correct. A re-run that pins the second
	// to a sender whose message the first took hangs by the pin, which is
	// no evidence (replay.RerunProvesNothing): no finding (recorder's
	// TestMPIRaceJudgedByRerunningTheJob, TestJudgeOutcome).
	{Name: "anysource-irecv-pair", Ranks: 3, Record: complete, Plain: PlainOK},
	// anysource-assume: the race whose other order aborts (only the data
	// tells): the battery alone leaves it unconfirmed; check's re-run with
	// the receive pinned to rank 2 finds it (recorder's
	// TestMPIRaceJudgedByRerunningTheJob). persistent: the first receive
	// is a persistent one (MPI_Recv_init, MPI_Start), pinned the same way.
	// Its correct version is anysource-race.
	{Name: "anysource-assume", Ranks: 3, Record: complete, Plain: PlainOK},
	{Name: "anysource-assume", Ranks: 3, Args: []string{"persistent"}, Record: complete, Plain: PlainOK},
	// anysource-last-sender: the same kind of race, the senders of one
	// line: only the re-run that pins the first receive to rank 3 aborts
	// (recorder's TestMPIRaceJudgedByRerunningTheJob); the recording is
	// clean, the senders staggered.
	{Name: "anysource-last-sender", Ranks: 4, Record: complete, Plain: PlainOK},
	// anysource-steal: a wildcard receive takes the message a later
	// receive from rank 0 needed (rank 2's, which only the wildcard
	// accepts, comes 0.2 s later): a hang at the Waitall whose nearest
	// candidate names the wildcard receive and its line (gpu/sim's
	// wildTook; replay's TestReplayWildcardThatTookTheMessageIsTheCandidate
	// pins the words). Plain mpirun hangs. Its fix posts the receive
	// from rank 0 first.
	{Name: "anysource-steal", Ranks: 3, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Hang, []int{1}, "wait"),
		Check: []MPIVerdict{
			find("", verdict.Hang, []int{1}, "wait"),
		}},
	{Name: "anysource-steal-fixed", Ranks: 3, Record: complete, Plain: PlainOK, FixOf: "anysource-steal"},
	// master-worker: results collected from MPI_ANY_SOURCE on purpose,
	// correct whatever their order: clean, every re-run clean.
	{Name: "master-worker", Ranks: 4, Record: complete, Plain: PlainOK},
	// probe-race: the race is an MPI_Probe's from MPI_ANY_SOURCE (the
	// receive after it names the status's source), the probed message
	// received into a buffer sized for rank 1's: check enumerates the
	// probe's other sender and, the model unable to judge what the program
	// does with that message, leaves it to a re-run with the probe pinned,
	// which aborts on MPI_ERR_TRUNCATE: a message-race of ranks 0, 1, 2 at
	// the probe (recorder's TestMPIRaceJudgedByRerunningTheJob; the battery
	// alone, as here, leaves it an unconfirmed note). iprobe: a loop of
	// MPI_Iprobe instead, the one that found the message pinned; mprobe and
	// improbe: the matched probes, MPI_Mrecv/MPI_Imrecv receiving the
	// message (the matched probe pinned).
	{Name: "probe-race", Ranks: 3, Record: complete, Plain: PlainOK},
	{Name: "probe-race", Ranks: 3, Args: []string{"iprobe"}, Record: complete, Plain: PlainOK},
	{Name: "probe-race", Ranks: 3, Args: []string{"mprobe"}, Record: complete, Plain: PlainOK},
	{Name: "probe-race", Ranks: 3, Args: []string{"improbe"}, Record: complete, Plain: PlainOK},
	// probe-race-fixed sizes the receive from the probe's status: its
	// re-run with the probe pinned is clean, a note and no finding.
	{Name: "probe-race-fixed", Ranks: 3, Record: complete, Plain: PlainOK, FixOf: "probe-race"},
	// mprobe: MPI-3 matched probes (MPI_Mprobe from MPI_ANY_SOURCE and
	// MPI_Mrecv of the probed message, sized from the status; improbe: an
	// MPI_Improbe loop, MPI_Imrecv and MPI_Wait), ending with a matched
	// probe of MPI_PROC_NULL. Each probe and the receive of its message are
	// the MPI_Probe idiom in the trace (recorder/mpi/mprobe.go): clean, the
	// probes' other orders a note.
	{Name: "mprobe", Ranks: 3, Record: complete, Plain: PlainOK, FixOf: "mprobe-truncate"},
	{Name: "mprobe", Ranks: 3, Args: []string{"improbe"}, Record: complete, Plain: PlainOK, FixOf: "mprobe-truncate"},
	// mprobe-truncate: the probed message (8 ints) received with MPI_Mrecv
	// into 4 ints: MPI_ERR_TRUNCATE at the Mrecv, fatal (mpirun exits 15);
	// check's replay of the cut trace finds the receive too small (the
	// receive of the probed message, at the Mrecv's line).
	{Name: "mprobe-truncate", Ranks: 2, Plain: PlainFail, PlainExit: 15,
		Record: rec(StatusCrashed, verdict.Truncation, []int{0}, "mrecv"),
		Check: []MPIVerdict{
			find("", verdict.Truncation, []int{1, 0}, "send", "mrecv"),
		}},

	// What real codes do, correct.
	{Name: "ring", Ranks: 4, Record: complete, Plain: PlainOK},
	{Name: "ring", Ranks: 4, Args: []string{"large"}, Record: complete, Plain: PlainOK},
	{Name: "persistent", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "persistent-bugs"},
	{Name: "waitany", Ranks: 4, Record: complete, Plain: PlainOK},
	{Name: "testall", Ranks: 2, Record: complete, Plain: PlainOK},
	{Name: "sendrecv-replace", Ranks: 4, Record: complete, Plain: PlainOK},
	{Name: "comm-split", Ranks: 4, Record: complete, Plain: PlainOK, FixOf: "comm-split-wrong-tag"},

	// comm-split-wrong-tag: inside each half ({0,2} and {1,3}) sub-rank 1
	// waits for tag 1, sub-rank 0 sent tag 0: world ranks 2 and 3 hang.
	// Under sync the two Sends block as well (one deadlock of all four
	// ranks): the same bug, so the hang as recorded alone. Ranks are world
	// ranks.
	{Name: "comm-split-wrong-tag", Ranks: 4, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Hang, []int{2, 3}, "recv"),
		Check: []MPIVerdict{
			find("", verdict.Hang, []int{2, 3}, "recv"),
		}},

	// intercomm: the halves {0,2} and {1,3} joined by MPI_Intercomm_create;
	// dest, source and status.MPI_SOURCE name ranks of the remote group
	// (MPI-3.1 sec. 6.6), recorded as world ranks; the intercomm's id is
	// the same on both sides. Clean (an intercomm barrier and
	// MPI_Intercomm_merge's communicator too).
	{Name: "intercomm", Ranks: 4, Record: complete, Plain: PlainOK},
	// intercomm-deadlock: world ranks 2 and 1 (remote ranks 0 and 1 of
	// each other) both MPI_Ssend first across the intercomm: a deadlock
	// at any size, named with world ranks.
	{Name: "intercomm-deadlock", Ranks: 4, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Deadlock, []int{1, 2}, "ssend-even", "ssend-odd"),
		Check: []MPIVerdict{
			find("", verdict.Deadlock, []int{1, 2}, "ssend-even", "ssend-odd"),
		}},
	{Name: "intercomm-deadlock-fixed", Ranks: 4, Record: complete, Plain: PlainOK, FixOf: "intercomm-deadlock"},

	// invalid-rank: MPI_Send to rank size: MPI_ERR_RANK under
	// MPI_ERRORS_ARE_FATAL; mpirun exits 6 (the error class). The refused
	// Send is not in the trace (see mpi-error), so check's replays do not
	// report it a second time (they did before).
	{Name: "invalid-rank", Ranks: 2, Plain: PlainFail, PlainExit: 6,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "send")},
	{Name: "invalid-rank-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "invalid-rank"},

	// ready-send: an MPI_Rsend that no synchronization orders after its
	// matching receive's post (MPI-3.1 sec. 3.4): Open MPI runs it; the
	// merge reports it from the run's messages and collectives, whatever
	// the timing (readyFindings), and check's replays of the same send are
	// the same finding. The fix posts, then a barrier, then the Rsend.
	{Name: "ready-send", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.ReadyWithoutRecv, []int{0, 1}, "rsend")},
	{Name: "ready-send-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "ready-send"},

	// abort: rank 1 calls MPI_Abort(MPI_COMM_WORLD, 3); mpirun exits 3.
	// Every message was matched: the crash is the whole verdict, check has
	// nothing to add.
	{Name: "abort", Ranks: 2, Plain: PlainFail, PlainExit: 3,
		Record: rec(StatusCrashed, "", []int{1}, "abort")},
	{Name: "abort-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "abort"},

	// segfault: a rank killed by SIGSEGV (mpirun exits 139) is a crash that
	// names the signal and where: inside the MPI call it came in (a buffer
	// at address 0x10), or in the program's own code after its last call
	// (own), after MPI_Finalize too (after-finalize: the trace is crashed,
	// not complete). The shim's handler notes it, then lets the signal take
	// its course. The replays of the cut trace add nothing.
	{Name: "segfault", Ranks: 2, Plain: PlainFail, PlainExit: 139,
		Record: rec(StatusCrashed, "", []int{0}, "send")},
	{Name: "segfault", Ranks: 2, Args: []string{"own"}, Plain: PlainFail, PlainExit: 139,
		Record: rec(StatusCrashed, "", []int{1}, "recv")},
	{Name: "segfault", Ranks: 2, Args: []string{"after-finalize"}, Plain: PlainFail, PlainExit: 139,
		Record: rec(StatusCrashed, "", []int{1}, "finalize")},
	{Name: "segfault-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "segfault"},

	// no-finalize: rank 1 returns from main without MPI_Finalize (MPI-3.1
	// sec. 8.7); mpirun ends the job as exiting improperly (exit 1). The
	// shim's exit handler notes it: an invalid-call after its last call.
	// exit: it gives up with exit(3) instead of MPI_Abort: a crash.
	{Name: "no-finalize", Ranks: 2, Plain: PlainFail, PlainExit: 1,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "recv")},
	{Name: "no-finalize", Ranks: 2, Args: []string{"exit"}, Plain: PlainFail, PlainExit: 3,
		Record: rec(StatusCrashed, "", []int{1}, "recv")},
	{Name: "no-finalize-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "no-finalize"},
	// misplaced-call: rank 1's MPI call before MPI_Init (before-init; rank
	// 0 is taken down inside MPI_Init, which waits for rank 1) or after
	// MPI_Finalize (after-finalize): Open MPI aborts it (exit 1), and the
	// recording names the call and its line (MPI-3.1 sec. 8.7).
	{Name: "misplaced-call", Ranks: 2, Args: []string{"before-init"}, Plain: PlainFail, PlainExit: 1,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "before-init")},
	{Name: "misplaced-call", Ranks: 2, Args: []string{"after-finalize"}, Plain: PlainFail, PlainExit: 1,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "after-finalize")},
	{Name: "misplaced-call-fixed", Ranks: 2, Args: []string{"before-init"}, Record: complete, Plain: PlainOK, FixOf: "misplaced-call"},
	{Name: "misplaced-call-fixed", Ranks: 2, Args: []string{"after-finalize"}, Record: complete, Plain: PlainOK, FixOf: "misplaced-call"},
	// fork-child: a child each rank forks exits with exit(0), and one that
	// rank 0 forks after MPI_Finalize dies of SIGSEGV: the shim's exit and
	// signal handlers, which a child inherits, leave the rank's segment
	// alone (without the pid check the trace was crashed). Correct.
	{Name: "fork-child", Ranks: 2, Record: complete, Plain: PlainOK},

	// mpi-error: MPI errors of other calls than a Send to a bad rank, each
	// the first p2p call of its rank while the other may still be in
	// MPI_Init (then it never creates its segment: it merges as a rank
	// without calls). Each is named with its call and line. Invalid tags:
	// MPI_ERR_TAG, mpirun exits 4; MPI_DATATYPE_NULL: MPI_ERR_TYPE, exits 3.
	// A call refused for a bad argument took no effect (MPI-3.1 sec. 8.4's
	// argument classes): the merge leaves it out of the trace, so check's
	// replays add nothing to the recorded invalid call (send-null-type's
	// type-mismatch and comm-null's deadlock under sync were added before).
	{Name: "mpi-error", Ranks: 2, Args: []string{"send-init-tag"}, Plain: PlainFail, PlainExit: 4,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "send-init")},
	{Name: "mpi-error", Ranks: 2, Args: []string{"recv-init-tag"}, Plain: PlainFail, PlainExit: 4,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "recv-init")},
	{Name: "mpi-error", Ranks: 2, Args: []string{"send-null-type"}, Plain: PlainFail, PlainExit: 3,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "send")},
	{Name: "mpi-error", Ranks: 2, Args: []string{"recv-null-type"}, Plain: PlainFail, PlainExit: 3,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "recv")},
	// bcast-root: MPI_ERR_ROOT (exit 8) in MPI_Bcast (recorded: its root
	// outside the world is that error, not also a collective mismatch).
	{Name: "mpi-error", Ranks: 2, Args: []string{"bcast-root"}, Plain: PlainFail, PlainExit: 8,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "bcast")},
	// comm-null: MPI_Send on MPI_COMM_NULL, MPI_ERR_COMM (exit 5).
	{Name: "mpi-error", Ranks: 2, Args: []string{"comm-null"}, Plain: PlainFail, PlainExit: 5,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "send-comm-null")},
	// gather-null: the root's MPI_Gather into a NULL receive buffer with
	// MPI_INT (no buffer): Open MPI crashes in the call (SIGSEGV, exit
	// 139); the shim fails it with MPI_ERR_BUFFER, a refused call left out
	// of the trace (so rank 1's Gather is not a missing collective: the
	// root's record is cut).
	{Name: "mpi-error", Ranks: 2, Args: []string{"gather-null"}, Plain: PlainFail, PlainExit: 139,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "gather-null")},
	// allreduce-null-type: rank 0's MPI_Allreduce with a NULL datatype
	// handle, which Open MPI's reductions read through (SIGSEGV, exit
	// 139): the shim fails it with MPI_ERR_TYPE. scan-null,
	// allgatherv-null, igather-null: NULL buffers in a reduction, a v
	// collective and a nonblocking collective (exit 139 in Open MPI), as
	// gather-null (the refused Igather is not in the trace either).
	{Name: "mpi-error", Ranks: 2, Args: []string{"allreduce-null-type"}, Plain: PlainFail, PlainExit: 139,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "allreduce-null-type")},
	{Name: "mpi-error", Ranks: 2, Args: []string{"scan-null"}, Plain: PlainFail, PlainExit: 139,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "scan-null")},
	{Name: "mpi-error", Ranks: 2, Args: []string{"allgatherv-null"}, Plain: PlainFail, PlainExit: 139,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "allgatherv-null")},
	{Name: "mpi-error", Ranks: 2, Args: []string{"igather-null"}, Plain: PlainFail, PlainExit: 139,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "igather-null")},
	{Name: "mpi-error-fixed", Ranks: 2, Args: []string{"gather-null"}, Record: complete, Plain: PlainOK, FixOf: "mpi-error"},
	{Name: "mpi-error-fixed", Ranks: 2, Args: []string{"allreduce-null-type"}, Record: complete, Plain: PlainOK, FixOf: "mpi-error"},
	{Name: "mpi-error-fixed", Ranks: 2, Args: []string{"scan-null"}, Record: complete, Plain: PlainOK, FixOf: "mpi-error"},
	{Name: "mpi-error-fixed", Ranks: 2, Args: []string{"allgatherv-null"}, Record: complete, Plain: PlainOK, FixOf: "mpi-error"},
	{Name: "mpi-error-fixed", Ranks: 2, Args: []string{"igather-null"}, Record: complete, Plain: PlainOK, FixOf: "mpi-error"},
	{Name: "mpi-error-fixed", Ranks: 2, Args: []string{"send-init-tag"}, Record: complete, Plain: PlainOK, FixOf: "mpi-error"},
	{Name: "mpi-error-fixed", Ranks: 2, Args: []string{"recv-init-tag"}, Record: complete, Plain: PlainOK, FixOf: "mpi-error"},
	{Name: "mpi-error-fixed", Ranks: 2, Args: []string{"send-null-type"}, Record: complete, Plain: PlainOK, FixOf: "mpi-error"},
	{Name: "mpi-error-fixed", Ranks: 2, Args: []string{"recv-null-type"}, Record: complete, Plain: PlainOK, FixOf: "mpi-error"},
	{Name: "mpi-error-fixed", Ranks: 2, Args: []string{"bcast-root"}, Record: complete, Plain: PlainOK, FixOf: "mpi-error"},
	{Name: "mpi-error-fixed", Ranks: 2, Args: []string{"comm-null"}, Record: complete, Plain: PlainOK, FixOf: "mpi-error"},

	// negative-count: a negative count, MPI_ERR_COUNT (mpirun exits 2):
	// send: rank 0's last MPI_Send of an off-by-one chunk loop; gatherv:
	// rank 1's MPI_Gatherv (its tile's count clamped from above only).
	// MPI refused the call (MPI_ERR_COUNT), so it is not in the trace
	// (see mpi-error) and check's replays add nothing; a trace that holds
	// a negative count (the Go door, a hand-made trace) replays to an
	// invalid-call too, not a trace that does not replay
	// (TestNegativeCountReplaysAsInvalidCall).
	{Name: "negative-count", Ranks: 2, Args: []string{"send"}, Plain: PlainFail, PlainExit: 2,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "send")},
	{Name: "negative-count", Ranks: 2, Args: []string{"gatherv"}, Plain: PlainFail, PlainExit: 2,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "gatherv")},
	// scatter: a negative send count at the root of MPI_Scatter, which Open
	// MPI does not check: the root dies of SIGSEGV in the call (mpirun
	// exits 139). The replay as recorded names the invalid call, and the
	// crash is said in it (verdict: an invalid-call explains a crash in
	// its call), in the recording as in check (MPI-CorrBench's
	// ArgError-MPIScatter-Count-3 got the crash alone at record time).
	{Name: "negative-count", Ranks: 2, Args: []string{"scatter"}, Plain: PlainFail, PlainExit: 139,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "scatter")},
	{Name: "negative-count-fixed", Ranks: 2, Args: []string{"send"}, Record: complete, Plain: PlainOK, FixOf: "negative-count"},
	{Name: "negative-count-fixed", Ranks: 2, Args: []string{"gatherv"}, Record: complete, Plain: PlainOK, FixOf: "negative-count"},

	// rma-size: one-sided accesses whose sides differ in size (MPI-3.1
	// sec. 11.3: the data must fit, without truncation): a Put of 4 ints
	// into a target of 2, a Get of 4 into an origin of 2, a
	// Get_accumulate fetching 4 into a result of 2. Open MPI checks none
	// (plain mpirun is ok: the Put writes past the target's ints); the
	// shim fails the call with MPI_ERR_TRUNCATE as a checking MPI would:
	// a truncation at its line, before any trace op of rank 1.
	{Name: "rma-size", Ranks: 2, Plain: PlainOK, Unchecked: true,
		Record: rec(StatusCrashed, verdict.Truncation, []int{1}, "put")},
	{Name: "rma-size", Ranks: 2, Args: []string{"get"}, Plain: PlainOK, Unchecked: true,
		Record: rec(StatusCrashed, verdict.Truncation, []int{1}, "get")},
	{Name: "rma-size", Ranks: 2, Args: []string{"getacc"}, Plain: PlainOK, Unchecked: true,
		Record: rec(StatusCrashed, verdict.Truncation, []int{1}, "getacc")},
	// null: a Put from a NULL origin buffer with a predefined datatype (no
	// buffer): Open MPI's copy fails with EFAULT and retries for ever; the
	// shim fails it with MPI_ERR_BUFFER, an invalid-call at its line.
	{Name: "rma-size", Ranks: 2, Args: []string{"null"}, Plain: PlainHang, Unchecked: true,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "null")},
	// type-null: a Put whose target datatype is MPI_DATATYPE_NULL (sec.
	// 2.5.1: no datatype): Open MPI fails it with MPI_ERR_TYPE; so does
	// the shim, first (its size check took the type for one of no bytes:
	// a truncation): an invalid-call at its line.
	{Name: "rma-size", Ranks: 2, Args: []string{"type-null"}, Plain: PlainFail, PlainExit: 3, Unchecked: true,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "type-null")},
	// win-null: rank 0's part of the window, 32 bytes at NULL (sec.
	// 11.2.1: no memory): Open MPI makes it and rank 1's Put into it
	// retries its EFAULT for ever; the shim fails rank 0's MPI_Win_create
	// with MPI_ERR_BUFFER, an invalid-call at its line. (Only one rank
	// errs: the first refusal aborts the job, which may end the other
	// rank before its own.)
	{Name: "rma-size", Ranks: 2, Args: []string{"win-null"}, Plain: PlainHang, Unchecked: true,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "win-null")},
	{Name: "rma-size-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "rma-size"},

	// start-active: rank 0 starts a persistent send that is still active
	// (MPI-3.1 sec. 3.9: erroneous). start: MPI_Start, which Open MPI does
	// not check (plain mpirun is ok): the recording fails the call as an
	// MPI that checks would (MPI_ERR_REQUEST, under MPI_ERRORS_ARE_FATAL
	// an abort); startall: MPI_Startall, which Open MPI checks (exit 7).
	// The call starts nothing, so no trace op: a crashed trace, check has
	// nothing to add.
	{Name: "start-active", Ranks: 2, Args: []string{"start"}, Plain: PlainOK, Unchecked: true,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "start")},
	{Name: "start-active", Ranks: 2, Args: []string{"startall"}, Plain: PlainFail, PlainExit: 7,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{0}, "startall")},
	{Name: "start-active-fixed", Ranks: 2, Args: []string{"start"}, Record: complete, Plain: PlainOK, FixOf: "start-active"},
	{Name: "start-active-fixed", Ranks: 2, Args: []string{"startall"}, Record: complete, Plain: PlainOK, FixOf: "start-active"},

	// The recording never changes what the program does: derived types
	// freed while their requests are pending (legal) and MPI_PROC_NULL as
	// the peer of Send, Recv, Probe and Iprobe are clean, and exit 0.
	{Name: "type-free-pending", Ranks: 2, Record: complete, Plain: PlainOK},
	{Name: "proc-null", Ranks: 2, Record: complete, Plain: PlainOK},
	// packed: MPI_PACKED sent and received as MPI_INT, and the reverse:
	// clean (MPI_PACKED matches any type signature, MPI-3.1 sec. 4.2).
	{Name: "packed", Ranks: 2, Record: complete, Plain: PlainOK},
	// request-free-active: an active send's request freed, its completion
	// learned from the reply (MPI-3.1 sec. 3.7.3, Example 3.12): clean,
	// with MPI_Isend or a started MPI_Send_init (freed, so no leak either).
	{Name: "request-free-active", Ranks: 2, Record: complete, Plain: PlainOK},
	{Name: "request-free-active", Ranks: 2, Args: []string{"persistent"}, Record: complete, Plain: PlainOK},

	// type-signature: derived types compared by type signature: int x 8
	// sent (contiguous(2, MPI_INT)), double x 4 received (contiguous(2,
	// MPI_DOUBLE)) is a type mismatch; the fixed version sends a vector and
	// receives a contiguous type of one signature (int x 8): clean.
	{Name: "type-signature", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.TypeMismatch, []int{0, 1}, "send", "recv"),
		Check: []MPIVerdict{
			find("", verdict.TypeMismatch, []int{0, 1}, "send", "recv"),
		}},
	{Name: "type-signature-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "type-signature"},

	// type-struct: mixed type signatures: struct {int, double} x 4 sent,
	// struct {double, int} x 4 received (same sizes) is a type mismatch,
	// the recording's finding (a trace records mixed types as opaque); the
	// fixed version receives contiguous(4, struct {int, double}): one
	// signature, clean.
	{Name: "type-struct", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.TypeMismatch, []int{0, 1}, "send", "recv")},
	{Name: "type-struct-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "type-struct"},

	// persistent-bugs: free: a persistent receive freed while active is a
	// missing Wait every time, whatever the replay's timing (the recorder
	// saw it active; a persistent send freed so is legitimate,
	// request-free-active); leak: never freed before MPI_Finalize, a
	// request leak (the recording's finding: a trace has no request
	// lifetimes); nowait: started and never completed, a missing Wait (and
	// a leak). Fix: persistent.
	{Name: "persistent-bugs", Ranks: 2, Args: []string{"free"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.MissingWait, []int{1}, "free-start", "free"),
		Check: []MPIVerdict{
			find("", verdict.MissingWait, []int{1}, "free-start", "free"),
		}},
	{Name: "persistent-bugs", Ranks: 2, Args: []string{"leak"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.RequestLeak, []int{0}, "leak-init")},
	// nostart: rank 0 never starts its persistent send; rank 1's Recv
	// waits for ever, rank 0 in the barrier: a deadlock whose candidate
	// names the MPI_Send_init never started, by the recording's
	// Header.Unstarted (replay's TestReplayUnstartedRequestIsTheCandidate
	// pins the words).
	{Name: "persistent-bugs", Ranks: 2, Args: []string{"nostart"}, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Deadlock, []int{0, 1}, "barrier", "recv"),
		Check: []MPIVerdict{
			find("", verdict.Deadlock, []int{0, 1}, "barrier", "recv"),
		}},
	{Name: "persistent-bugs", Ranks: 2, Args: []string{"nowait"}, Plain: PlainOK,
		Record:     rec(StatusComplete, verdict.MissingWait, []int{0}, "nowait-start"),
		RecordAlso: []MPIVerdict{find("", verdict.RequestLeak, []int{0}, "nowait-init")},
		Check: []MPIVerdict{
			find("", verdict.MissingWait, []int{0}, "nowait-start"),
		}},

	// buffer-overlap: overlapping buffers, the recording's finding (from
	// the buffers' addresses, which a trace does not hold), on both ranks:
	// sendrecv: the send and receive buffers of one MPI_Sendrecv; pending:
	// an MPI_Isend from bytes a pending MPI_Irecv writes (the recording
	// also sees the Isend's buffer change before completion: the same
	// bug, said in the overlap's finding).
	{Name: "buffer-overlap", Ranks: 2, Args: []string{"sendrecv"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.BufferOverlap, []int{0, 1}, "sendrecv")},
	{Name: "buffer-overlap", Ranks: 2, Args: []string{"pending"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.BufferOverlap, []int{0, 1}, "irecv", "isend")},
	{Name: "buffer-overlap-fixed", Ranks: 2, Args: []string{"sendrecv"}, Record: complete, Plain: PlainOK, FixOf: "buffer-overlap"},
	{Name: "buffer-overlap-fixed", Ranks: 2, Args: []string{"pending"}, Record: complete, Plain: PlainOK, FixOf: "buffer-overlap"},

	// buffer-overrun: a buffer larger than the variable it points into,
	// the recording's finding (from the buffer's address, the calling
	// function's frame and the program's debug info, which a trace does
	// not hold): recv-count: rank 1's MPI_Recv of 8 ints into an int[4]
	// local of another function (4 arrive: the run ends well); send-type:
	// rank 0's MPI_Send of 2 MPI_DOUBLE from an int[2]; reduce-global:
	// every rank's MPI_Reduce of 2 ints from a global int, one finding
	// naming both ranks; gatherv-displs: the root's MPI_Gatherv whose
	// displacements reach past a static int[3]. The fix's buffers lie
	// inside larger variables and end at their ends (not overruns).
	{Name: "buffer-overrun", Ranks: 2, Args: []string{"recv-count"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.BufferOverrun, []int{1}, "recv")},
	{Name: "buffer-overrun", Ranks: 2, Args: []string{"send-type"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.BufferOverrun, []int{0}, "send")},
	{Name: "buffer-overrun", Ranks: 2, Args: []string{"reduce-global"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.BufferOverrun, []int{0, 1}, "reduce")},
	// send-stack: rank 0's MPI_Send of 64 KiB from a 64-byte local of
	// main, past the top of the stack: the library's read kills the rank
	// (the shim does not hash what is not there, so the call is recorded),
	// and that crash is the overrun's effect, said in its finding.
	{Name: "buffer-overrun", Ranks: 2, Args: []string{"send-stack"}, Plain: PlainFail, PlainExit: 139,
		Record: rec(StatusCrashed, verdict.BufferOverrun, []int{0}, "send-stack")},
	{Name: "buffer-overrun-fixed", Ranks: 2, Args: []string{"send-stack"}, Record: complete, Plain: PlainOK, FixOf: "buffer-overrun"},
	// host-type: datatypes that do not name the variables' C types, of the
	// same size (nothing overruns): unsigned-int: every rank's MPI_Reduce
	// of an int as MPI_UNSIGNED (the send side on both ranks, the root's
	// receive side); float-int: rank 0's MPI_Send of an int[2] as
	// MPI_FLOAT. The fix also moves a struct as MPI_BYTE, an unsigned
	// char[] as MPI_CHAR, a long as MPI_LONG_LONG and an enum as MPI_INT.
	{Name: "host-type", Ranks: 2, Args: []string{"unsigned-int"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.HostTypeMismatch, []int{0, 1}, "reduce")},
	{Name: "host-type", Ranks: 2, Args: []string{"float-int"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.HostTypeMismatch, []int{0}, "send")},
	{Name: "host-type-fixed", Ranks: 2, Args: []string{"unsigned-int"}, Record: complete, Plain: PlainOK, FixOf: "host-type"},
	{Name: "host-type-fixed", Ranks: 2, Args: []string{"float-int"}, Record: complete, Plain: PlainOK, FixOf: "host-type"},
	// recv-heap: rank 1's MPI_Recv of 8 ints into a malloc'd block of 4
	// (the shim notes the blocks malloc makes).
	{Name: "buffer-overrun", Ranks: 2, Args: []string{"recv-heap"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.BufferOverrun, []int{1}, "recv-heap")},
	{Name: "buffer-overrun-fixed", Ranks: 2, Args: []string{"recv-heap"}, Record: complete, Plain: PlainOK, FixOf: "buffer-overrun"},
	// win-base: every rank's MPI_Win_create over its pointer variable with
	// the size of what it points to; put-origin: rank 0's MPI_Put of 4
	// ints from an int[2] (one-sided calls, named by their call).
	{Name: "buffer-overrun", Ranks: 2, Args: []string{"win-base"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.BufferOverrun, []int{0, 1}, "win-base")},
	{Name: "buffer-overrun", Ranks: 2, Args: []string{"put-origin"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.BufferOverrun, []int{0}, "put-origin")},
	{Name: "buffer-overrun-fixed", Ranks: 2, Args: []string{"win-base"}, Record: complete, Plain: PlainOK, FixOf: "buffer-overrun"},
	{Name: "buffer-overrun-fixed", Ranks: 2, Args: []string{"put-origin"}, Record: complete, Plain: PlainOK, FixOf: "buffer-overrun"},
	{Name: "buffer-overrun", Ranks: 2, Args: []string{"gatherv-displs"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.BufferOverrun, []int{0}, "gatherv")},
	{Name: "buffer-overrun-fixed", Ranks: 2, Args: []string{"recv-count"}, Record: complete, Plain: PlainOK, FixOf: "buffer-overrun"},
	{Name: "buffer-overrun-fixed", Ranks: 2, Args: []string{"gatherv-displs"}, Record: complete, Plain: PlainOK, FixOf: "buffer-overrun"},
	{Name: "buffer-overrun-fixed", Ranks: 2, Args: []string{"send-type"}, Record: complete, Plain: PlainOK, FixOf: "buffer-overrun"},
	{Name: "buffer-overrun-fixed", Ranks: 2, Args: []string{"reduce-global"}, Record: complete, Plain: PlainOK, FixOf: "buffer-overrun"},

	// recv-buffer-write: the program writes the buffer of a pending receive
	// (irecv: MPI_Irecv; persistent: after MPI_Start): the recording's
	// finding (the shim hashes pending receive buffers between MPI calls),
	// naming the receive and the call that saw the change. Fixed: the
	// buffers are touched after the Wait only, and Open MPI delivers both
	// messages (one eager, one past the eager limit) during an
	// MPI_Comm_create, which the shim does not record: not the program's
	// write.
	{Name: "recv-buffer-write", Ranks: 2, Args: []string{"irecv"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.RecvBufferWrite, []int{1}, "irecv", "barrier")},
	{Name: "recv-buffer-write", Ranks: 2, Args: []string{"persistent"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.RecvBufferWrite, []int{1}, "start", "barrier")},
	{Name: "recv-buffer-write-fixed", Ranks: 2, Args: []string{"irecv"}, Record: complete, Plain: PlainOK, FixOf: "recv-buffer-write"},
	{Name: "recv-buffer-write-fixed", Ranks: 2, Args: []string{"persistent"}, Record: complete, Plain: PlainOK, FixOf: "recv-buffer-write"},

	// released-buffer: the program releases a pending Isend's buffer before
	// its Wait (frame: the posting function returns, its caller waits;
	// freed: free() between the Isend and the Wait): the recording's
	// finding, naming the Isend and the call made from above the frame,
	// or the free. Fixed: the Wait comes first.
	{Name: "released-buffer", Ranks: 2, Args: []string{"frame"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.ReleasedBuffer, []int{0}, "frame-isend", "wait")},
	{Name: "released-buffer", Ranks: 2, Args: []string{"freed"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.ReleasedBuffer, []int{0}, "freed-isend", "free")},
	{Name: "released-buffer-fixed", Ranks: 2, Args: []string{"frame"}, Record: complete, Plain: PlainOK, FixOf: "released-buffer"},
	{Name: "released-buffer-fixed", Ranks: 2, Args: []string{"freed"}, Record: complete, Plain: PlainOK, FixOf: "released-buffer"},

	// cancel-recv: MPI_Cancel (MPI 4.0 sec. 3.8.4). unmatched: a receive
	// nobody sends to and an AnySource receive posted before any message
	// could come, both cancelled and waited: clean under every replay of
	// check (the cancelled AnySource receive matched nothing: no
	// alternatives); before MPI_Cancel was modelled, a false deadlock at
	// the wait. matched: the receive matched (by an MPI_Ssend, before a
	// barrier) ahead of its cancel, which fails: the data arrives, clean
	// under sync and delay too.
	{Name: "cancel-recv", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "cancel-nowait"},
	{Name: "cancel-recv", Ranks: 2, Args: []string{"matched"}, Record: complete, Plain: PlainOK},
	// cancel-nowait: the cancelled receive is never completed: a missing
	// Wait, as any request left active (the cancel only marks it).
	{Name: "cancel-nowait", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.MissingWait, []int{0}, "irecv"),
		Check: []MPIVerdict{
			find("", verdict.MissingWait, []int{0}, "irecv"),
		}},
	{Name: "cancel-nowait-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "cancel-nowait"},

	// bsend-noattach: MPI_Bsend with no buffer attached (MPI-3.1 sec. 3.6):
	// bsend-buffer on rank 0 at the Bsend, as recorded (Open MPI lets it
	// through); before MPI_Buffer_attach was recorded, no findings.
	{Name: "bsend-noattach", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.BsendBuffer, []int{0}, "bsend"),
		Check: []MPIVerdict{
			find("", verdict.BsendBuffer, []int{0}, "bsend"),
		}},
	{Name: "bsend-noattach-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "bsend-noattach"},
	// bsend-overflow: space for one message attached, two in flight (the
	// receiver receives after a barrier): the second Bsend does not fit
	// beside the first, not yet transmitted; the finding names the attach.
	{Name: "bsend-overflow", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.BsendBuffer, []int{0}, "bsend", "attach"),
		Check: []MPIVerdict{
			find("", verdict.BsendBuffer, []int{0}, "bsend", "attach"),
		}},
	{Name: "bsend-overflow-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "bsend-overflow"},
	// Collectives (MPI-3.1 ch. 5). coll-order: MPI-3.1 sec. 5.13's (Correctness)
	// erroneous order, rank 0's Bcast (root 0) before its Send, rank 1's
	// Recv before its Bcast: complete (the root waits for no one), but
	// under sync every collective synchronizes: a deadlock of the Bcast
	// and the Recv, and the Bcast is unsafe buffering (it completes only
	// if the collective does not synchronize).
	{Name: "coll-order", Ranks: 2, Record: complete, Plain: PlainOK,
		Check: []MPIVerdict{
			find("sync", verdict.Deadlock, []int{0, 1}, "bcast", "recv"),
			find("sync", verdict.UnsafeBuffering, []int{0, 1}, "bcast"),
		}},
	{Name: "coll-order-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "coll-order"},
	// coll-comm-order: Allreduce on the world and on a dup of it, in
	// another order per rank (MPI-3.1 sec. 5.13): each waits for the other,
	// which is in the other communicator's call; a dup is as large as the
	// world, so every rank is its member: a deadlock (before: a hang, rank
	// 1 "waits for a message no rank can send"). Open MPI hangs. bcast:
	// Bcasts (the root does not wait): complete; under sync the deadlock.
	{Name: "coll-comm-order", Ranks: 2, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Deadlock, []int{0, 1}, "world", "dup"),
		Check: []MPIVerdict{
			find("", verdict.Deadlock, []int{0, 1}, "world", "dup"),
		}},
	{Name: "coll-comm-order", Ranks: 2, Args: []string{"bcast"}, Record: complete, Plain: PlainOK,
		Check: []MPIVerdict{
			find("sync", verdict.Deadlock, []int{0, 1}, "bcast-world", "bcast-dup"),
			find("sync", verdict.UnsafeBuffering, []int{0, 1}, "bcast-world"),
		}},
	{Name: "coll-comm-order-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "coll-comm-order"},
	{Name: "coll-comm-order-fixed", Ranks: 2, Args: []string{"bcast"}, Record: complete, Plain: PlainOK, FixOf: "coll-comm-order"},
	// split-coll-order: Allreduce on the world and on the even/odd half,
	// rank 2 on its half first: rank 0 (world) and rank 2 (half) wait for
	// each other; the trace header's comms name rank 0 a member of the
	// half before it uses it: a deadlock (before: a hang). Open MPI hangs.
	{Name: "split-coll-order", Ranks: 4, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Deadlock, []int{0, 1, 2, 3}, "world-first", "half-first"),
		Check: []MPIVerdict{
			find("", verdict.Deadlock, []int{0, 1, 2, 3}, "world-first", "half-first"),
		}},
	{Name: "split-coll-order-fixed", Ranks: 4, Record: complete, Plain: PlainOK, FixOf: "split-coll-order"},
	// untraced-coll: collectives the trace has no op for, the shim marks
	// the rank blocked in them: rank 0 in MPI_Neighbor_allgather where rank
	// 1 is in MPI_Barrier of the same Cartesian communicator (neighbor), or
	// in MPI_Barrier of an intercommunicator where rank 1 merges it
	// (intercomm). Open MPI hangs; the recording calls the job hung at once
	// (it used to run until killed), naming both calls; the replay has
	// nothing to add (the calls are not in the trace).
	{Name: "untraced-coll", Ranks: 2, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Hang, []int{0, 1}, "neighbor", "barrier")},
	{Name: "untraced-coll", Ranks: 2, Args: []string{"intercomm"}, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Hang, []int{0, 1}, "inter-barrier", "merge")},
	{Name: "untraced-coll-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "untraced-coll"},
	{Name: "untraced-coll-fixed", Ranks: 2, Args: []string{"intercomm"}, Record: complete, Plain: PlainOK, FixOf: "untraced-coll"},

	// rma-sync: one-sided calls against their synchronization rules
	// (MPI-3.1 sec. 11.5), which the shim marks. put: rank 1's MPI_Put
	// before any fence, and unlock: its MPI_Win_unlock without a lock, fail
	// with MPI_ERR_RMA_SYNC (mpirun exits 47): an invalid call at the line,
	// where the window's default handler made an anonymous crash. wait:
	// rank 0 waits (MPI_Win_wait) for an access epoch rank 1 never starts,
	// rank 1 is in MPI_Win_free: Open MPI hangs; the recording names both,
	// with the one-sided hint.
	{Name: "rma-sync", Ranks: 2, Plain: PlainFail, PlainExit: 47,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "put")},
	{Name: "rma-sync", Ranks: 2, Args: []string{"nosync"}, Plain: PlainFail, PlainExit: 47,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "put-nosync")},
	// free-locked, free-pending: the window freed while rank 1 holds its
	// lock, or with a Put no fence completed (sec. 11.2.5): Open MPI frees
	// it; the shim fails the free with MPI_ERR_RMA_SYNC.
	{Name: "rma-sync", Ranks: 2, Args: []string{"free-locked"}, Plain: PlainOK, Unchecked: true,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "free")},
	{Name: "rma-sync", Ranks: 2, Args: []string{"free-pending"}, Plain: PlainOK, Unchecked: true,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "free")},
	{Name: "rma-sync", Ranks: 2, Args: []string{"unlock"}, Plain: PlainFail, PlainExit: 47,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "unlock")},
	{Name: "rma-sync", Ranks: 2, Args: []string{"wait"}, Plain: PlainHang,
		Record: rec(StatusHung, verdict.Hang, []int{0, 1}, "wait", "free")},
	// lock-in-fence: a lock epoch inside a fence epoch (sec. 11.5.3):
	// Open MPI runs it; the shim notes the lock at the fence that ends the
	// fence epoch, and the record names it (mixedEpochFindings).
	{Name: "rma-sync", Ranks: 2, Args: []string{"lock-in-fence"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.InvalidCall, []int{1}, "lock-in-fence")},
	// lock-all: MPI_Win_lock_all while the rank holds a lock of the window
	// (sec. 11.5: an origin's access epochs are disjoint): Open MPI runs
	// it; the shim fails it with MPI_ERR_RMA_SYNC.
	{Name: "rma-sync", Ranks: 2, Args: []string{"lock-all"}, Plain: PlainOK, Unchecked: true,
		Record: rec(StatusCrashed, verdict.InvalidCall, []int{1}, "lock-all")},
	{Name: "rma-sync-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "rma-sync"},
	{Name: "rma-sync-fixed", Ranks: 2, Args: []string{"lock-in-fence"}, Record: complete, Plain: PlainOK, FixOf: "rma-sync"},
	// lock-no-epoch: lock epochs between two fences with no RMA call between
	// them, which start no epoch (sec. 11.5.1): no finding.
	{Name: "rma-sync-fixed", Ranks: 2, Args: []string{"lock-no-epoch"}, Record: complete, Plain: PlainOK, FixOf: "rma-sync"},

	// rma-conflict: conflicting one-sided accesses in one fence epoch
	// (MPI-3.1 sec. 11.7), which Open MPI runs without a word, an epoch
	// each: two Puts to one int (put), a Put and a Get of one int (get),
	// accumulates with different ops (acc); the merge names both calls of
	// each (rma-conflict). origin: rank 1 writes its Put's origin buffer
	// before the fence that completes it (sec. 11.3): an in-flight
	// mutation at the Put and the fence; getbuf: rank 2 writes its Get's
	// origin buffer before that fence, a recv-buffer-write at the Get and
	// the fence; fetch: the same for an MPI_Fetch_and_op's result buffer
	// (sec. 11.3.4); ownwin: rank 2 MPI_Gets into its own window's int 0
	// while rank 1 MPI_Puts to it, one fence epoch: an rma-conflict (the
	// Get's origin buffer is window memory it writes); rput and rget: the same for MPI_Rput's and MPI_Rget's
	// origin buffers written before the MPI_Wait that completes their
	// requests (sec. 11.3.5); rgetput: rank 1's MPI_Rget and MPI_Rput of one
	// int pending together in a shared lock epoch (the fix waits for the
	// Rget first: its data is in, sec. 11.3.5). getget: rank 2's two Gets into one int,
	// both pending: a buffer-overlap naming both. lock: two Puts to one int in
	// shared lock epochs open at the same time (a barrier of the two
	// inside them); pscw: likewise in two origins' access epochs of one
	// exposure epoch (MPI_Win_post/start/complete/wait); lockapart: two
	// Puts to one int in shared lock epochs open at different times that
	// nothing orders (recorder/mpi's syncOrder). The fixed
	// version's accumulates share one op, which is
	// allowed, its Puts in exclusive lock epochs are serialized, and its
	// shared epochs are ordered by a barrier. (One job: the modes are
	// epochs of one run.)
	// (The record's rma-conflict findings are checked as one: their ranks
	// and lines together; TestRMAConflictRule pins which pairs.)
	{Name: "rma-conflict", Ranks: 3, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.RMAConflict, []int{1, 2}, "put-1", "put-2", "get-put", "get-get", "acc-sum", "acc-max",
			"ownwin-put", "ownwin-get", "lock-1", "lock-2", "pscw-1", "pscw-2", "lockapart-1", "lockapart-2", "rgetput-get", "rgetput-put"),
		RecordAlso: []MPIVerdict{
			find("", verdict.InFlightMutation, []int{1}, "origin-put", "origin-fence"),
			find("", verdict.RecvBufferWrite, []int{2}, "getbuf-get", "getbuf-fence"),
			find("", verdict.InFlightMutation, []int{1}, "rput-put", "rput-wait"),
			find("", verdict.RecvBufferWrite, []int{2}, "rget-get", "rget-wait"),
			find("", verdict.RecvBufferWrite, []int{1}, "fetch-op", "fetch-fence"),
			find("", verdict.BufferOverlap, []int{2}, "getget-1", "getget-2"),
		}},
	{Name: "rma-conflict-fixed", Ranks: 3, Record: complete, Plain: PlainOK, FixOf: "rma-conflict"},

	// resource-leak: communicators (three MPI_Comm_dup in a loop, an
	// MPI_Comm_split), a window, a datatype, a group and a reduction op
	// never freed before MPI_Finalize, which does not free them (MPI-3.1
	// sec. 8.7); a split and a datatype that were freed are not named.
	// Open MPI says nothing.
	{Name: "resource-leak", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.ResourceLeak, []int{0, 1}, "dup", "split", "win", "type", "group", "op")},
	{Name: "resource-leak-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "resource-leak"},

	// coll-mismatch: Reduce against Bcast as the world's first collective:
	// Open MPI hangs; the recording and check name both calls.
	{Name: "coll-mismatch", Ranks: 2, Plain: PlainHang,
		Record: rec(StatusHung, verdict.CollectiveMismatch, []int{0, 1}, "reduce", "bcast"),
		Check: []MPIVerdict{
			find("", verdict.CollectiveMismatch, []int{0, 1}, "reduce", "bcast"),
		}},
	// coll-missing: rank 0, the root, finishes without the MPI_Reduce that
	// rank 1 called (MPI-3.1 sec. 5.1); Open MPI completes the job (rank
	// 1's part went out eagerly). gather: rank 1 finishes without the
	// MPI_Gather that rank 0, the root, waits in: the job hangs. Either
	// way the finding is the missing call, through every door (under sync
	// the Reduce's rank 1 waits for its root: the same call, one finding).
	{Name: "coll-missing", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.CollectiveMismatch, []int{0, 1}, "reduce"),
		Check: []MPIVerdict{
			find("", verdict.CollectiveMismatch, []int{0, 1}, "reduce"),
		}},
	{Name: "coll-missing", Ranks: 2, Args: []string{"gather"}, Plain: PlainHang,
		Record: rec(StatusHung, verdict.CollectiveMismatch, []int{0, 1}, "gather"),
		Check: []MPIVerdict{
			find("", verdict.CollectiveMismatch, []int{0, 1}, "gather"),
		}},
	{Name: "coll-missing-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "coll-missing"},
	{Name: "coll-missing-fixed", Ranks: 2, Args: []string{"gather"}, Record: complete, Plain: PlainOK, FixOf: "coll-missing"},
	// size: Bcasts of 16 and 8 bytes: Open MPI fails the smaller with
	// MPI_ERR_TRUNCATE (a truncation of the merge); the replay of the
	// crashed trace adds the collective mismatch behind it.
	{Name: "coll-mismatch", Ranks: 2, Args: []string{"size"}, Plain: PlainFail, PlainExit: 15,
		Record: rec(StatusCrashed, verdict.CollectiveMismatch, []int{0, 1}, "bcast-size"),
		Check: []MPIVerdict{
			find("", verdict.CollectiveMismatch, []int{0, 1}, "bcast-size"),
		}},
	// dtype: Bcasts of 4 MPI_INT and 4 MPI_FLOAT (16 bytes each, not the
	// same type signature: MPI-3.1 sec. 5.4); op: Allreduce with MPI_SUM
	// and MPI_MAX (sec. 5.9.1: the same op everywhere). Open MPI completes
	// both; the recording's replay names both calls.
	{Name: "coll-mismatch", Ranks: 2, Args: []string{"dtype"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.CollectiveMismatch, []int{0, 1}, "bcast-dtype"),
		Check: []MPIVerdict{
			find("", verdict.CollectiveMismatch, []int{0, 1}, "bcast-dtype"),
		}},
	// allgather: every rank's MPI_Allgather sends 2 ints and receives 4
	// from each (sec. 5.7: equal type signatures): Open MPI completes;
	// alltoall: rank 0 sends and receives 4 ints a rank, rank 1 2 (sec.
	// 5.8): Open MPI fails rank 1 with MPI_ERR_TRUNCATE, folded into the
	// finding. (Each rank's own block agrees, so rank 1 fails only once
	// rank 0's message came: both calls are in the trace. With 4 sent and
	// 2 received on both ranks, rank 1's own block failed it before rank 0
	// had entered the call, now and then, under load, and the trace held
	// one member of the call.) The allgather's send side is only in the
	// shim's records (the merge's rule, vcountFindings): the replays have
	// nothing to add.
	{Name: "coll-mismatch", Ranks: 2, Args: []string{"allgather"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.CollectiveMismatch, []int{0, 1}, "allgather")},
	{Name: "coll-mismatch", Ranks: 2, Args: []string{"alltoall"}, Plain: PlainFail, PlainExit: 15,
		Record: rec(StatusCrashed, verdict.CollectiveMismatch, []int{0, 1}, "alltoall")},
	{Name: "coll-mismatch", Ranks: 2, Args: []string{"op"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.CollectiveMismatch, []int{0, 1}, "allreduce-op"),
		Check: []MPIVerdict{
			find("", verdict.CollectiveMismatch, []int{0, 1}, "allreduce-op"),
		}},
	// coll-mismatch-fixed: also a Bcast of 4 MPI_INT against one
	// contiguous type of 4 MPI_INT (the same signature), and Allreduces
	// with MPI_SUM and with a user-defined op (per-process handles): clean.
	{Name: "coll-mismatch-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "coll-mismatch"},
	// coll-vcounts: a v collective whose members disagree on what one sends
	// another (MPI-3.1 sec. 5.5-5.8; Reduce_scatter's recvcounts, sec.
	// 5.10.1), the receiver expecting more, which Open MPI does not report:
	// the merge compares the count vectors the shim records (vcounts), one
	// collective-mismatch naming the call on both ranks. Fixed: counts that
	// agree (zero, uneven, MPI_IN_PLACE): clean.
	// alltoallv-type: sizes that agree, ints sent to a member that
	// receives floats: the type signatures differ (the C types the shim
	// noted for each side's buffer).
	// (Without a mode each program makes all seven calls in turn: one job,
	// seven findings, where a job a mode took 40 s of go test on 2 cores.)
	{Name: "coll-vcounts", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.CollectiveMismatch, []int{0, 1},
			"gatherv", "scatterv", "allgatherv", "alltoallv", "alltoallv-int", "alltoallv-float", "igatherv", "reduce-scatter")},
	{Name: "coll-vcounts-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "coll-vcounts"},
	// collectives: every recorded collective, on the world and on a split
	// communicator (Scan, Exscan, Bcast), with a Sendrecv ring between
	// them: clean, also under sync.
	{Name: "collectives", Ranks: 4, Record: complete, Plain: PlainOK},
	// Nonblocking collectives (MPI-3.1 sec. 5.12). icoll-nowait: rank 0's
	// MPI_Iallreduce request is never completed: a missing wait, as a
	// never-waited MPI_Isend's.
	{Name: "icoll-nowait", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.MissingWait, []int{0}, "leak"),
		Check: []MPIVerdict{
			find("", verdict.MissingWait, []int{0}, "leak"),
		}},
	{Name: "icoll-nowait-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "icoll-nowait"},
	// icoll-order: rank 0's Ibcast then Barrier, rank 1's Barrier then
	// Ibcast: collectives (blocking and nonblocking) in another order per
	// rank. Open MPI completes it (its nonblocking collectives have their
	// own tags); the first and second collectives of the world disagree:
	// two collective-mismatches.
	{Name: "icoll-order", Ranks: 2, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.CollectiveMismatch, []int{0, 1}, "ibcast", "barrier", "barrier-b", "ibcast-b"),
		Check: []MPIVerdict{
			find("", verdict.CollectiveMismatch, []int{0, 1}, "ibcast", "barrier-b"),
			find("", verdict.CollectiveMismatch, []int{0, 1}, "barrier", "ibcast-b"),
		}},
	{Name: "icoll-order-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "icoll-order"},
	// icollectives: every recorded nonblocking collective, overlapping
	// Isend/Irecv rings and a blocking Allreduce, completed by Wait,
	// Waitall and a Test loop, an Iscan on a reversed split communicator:
	// clean, also under sync.
	{Name: "icollectives", Ranks: 4, Record: complete, Plain: PlainOK},
	// icoll-buffers: a pending nonblocking collective's buffers are MPI's
	// (MPI-3.1 sec. 5.12). bcast: the root writes its Ibcast buffer before
	// the Wait: the send side's hashes at the call and at completion differ,
	// an in-flight-mutation as an Isend's. allreduce, gather: a receive side
	// written before the Wait, seen by the shim's watch of pending receive
	// buffers: recv-buffer-write naming the call and the Wait that noticed.
	// Fixed: writes after the Wait, reads of send buffers while pending, an
	// MPI_IN_PLACE Iallreduce: clean.
	{Name: "icoll-buffers", Ranks: 2, Args: []string{"bcast"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.InFlightMutation, []int{0}, "ibcast")},
	{Name: "icoll-buffers", Ranks: 2, Args: []string{"allreduce"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.RecvBufferWrite, []int{1}, "iallreduce", "wait-allreduce")},
	{Name: "icoll-buffers", Ranks: 2, Args: []string{"gather"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.RecvBufferWrite, []int{0}, "igather", "wait-gather")},
	// allgatherv: the receive buffer of a nonblocking v collective, as far
	// as its counts and displacements reach, is watched as well.
	{Name: "icoll-buffers", Ranks: 2, Args: []string{"allgatherv"}, Plain: PlainOK,
		Record: rec(StatusComplete, verdict.RecvBufferWrite, []int{0}, "iallgatherv", "wait-allgatherv")},
	{Name: "icoll-buffers-fixed", Ranks: 2, Record: complete, Plain: PlainOK, FixOf: "icoll-buffers"}, // all four
}

// MPICFlags are the flags BuildMPI compiles every program with.
var MPICFlags = []string{"-g", "-O0", "-std=c99"}

// BuildMPI compiles every testdata/mpi/*.c with mpicc -g -O0 (MPICFlags) into
// a temporary folder, in parallel, and returns the folder; the binary of
// NAME.c is NAME. Sources are compiled from root as testdata/mpi/NAME.c, so
// that call sites in reports read "testdata/mpi/NAME.c:LINE" (MPICulprit).
// It skips the test when mpicc is missing (mpitest.RequireMPI).
// Each call builds anew (a few seconds): build once per test where you can.
func BuildMPI(t testing.TB, root string) string {
	t.Helper()
	mpitest.RequireMPI(t)
	bin := t.TempDir()
	if err := buildMPIInto(root, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// buildMPIInto compiles every testdata/mpi/*.c into bin, several at a time.
// With OpenMPI's wrapper it asks mpicc once for the compiler and the flags it
// adds (mpicc -showme) and runs the compiler itself: the wrapper costs about
// a third of a second a call, more than compiling one of these programs.
// Other wrappers (MPICH's mpicc has no -showme) are called per program.
func buildMPIInto(root, bin string) error {
	srcs, err := filepath.Glob(filepath.Join(root, "testdata", "mpi", "*.c"))
	if err != nil {
		return err
	}
	if len(srcs) == 0 {
		return fmt.Errorf("no programs under %s", filepath.Join(root, "testdata", "mpi"))
	}
	cc, wrap := "mpicc", []string(nil)
	if out, err := exec.Command("mpicc", "-showme").Output(); err == nil {
		if f := strings.Fields(string(out)); len(f) > 0 {
			if _, err := exec.LookPath(f[0]); err == nil {
				cc, wrap = f[0], f[1:]
			}
		}
	}
	errs := make([]string, len(srcs))
	sem := make(chan struct{}, max(4, 2*runtime.NumCPU()))
	var wg sync.WaitGroup
	for i, src := range srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			name := strings.TrimSuffix(filepath.Base(src), ".c")
			// The source as "testdata/mpi/NAME.c", compiled from root: the
			// debug info names it so, and so do the sites of a report
			// (MPICulprit's form).
			rel := filepath.ToSlash(filepath.Join("testdata", "mpi", name+".c"))
			args := append(slices.Clone(MPICFlags), "-o", filepath.Join(bin, name), rel)
			args = append(args, wrap...) // the wrapper's -I, -L and -l after the source
			cmd := exec.Command(cc, args...)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Sprintf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
			}
		}()
	}
	wg.Wait()
	if msg := strings.Join(slices.DeleteFunc(errs, func(s string) bool { return s == "" }), "\n"); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// MPICulprit returns "testdata/mpi/NAME.c:LINE" for the line of the program's
// source marked "// culprit: MARKER".
func MPICulprit(t testing.TB, root, name, marker string) string {
	t.Helper()
	rel := "testdata/mpi/" + name + ".c"
	return rel + ":" + strconv.Itoa(MarkerLine(t, filepath.Join(root, rel), marker))
}

// MPIEnv is what mpirun needs here on top of the environment (mpitest.Env).
// Do not rely on mpirun's stderr for the text of an MPI
// error: with OpenMPI 4.1.4 the "MPI_ERR_RANK: invalid rank" banner of a
// dying job comes out in about half the runs, the others print
// "ORTE_ERROR_LOG: Data unpack would read past end of buffer in file
// ../../../orte/util/show_help.c" instead (help aggregation on or off alike);
// the exit status is reliable.
func MPIEnv() []string { return mpitest.Env() }

// MPIRunArgs is the mpirun command line for a scenario whose binaries are in bin.
func MPIRunArgs(bin string, s MPIScenario) []string {
	args := []string{"mpirun", "--oversubscribe", "-n", strconv.Itoa(s.Ranks), filepath.Join(bin, s.Name)}
	return append(args, s.Args...)
}

// MPIRunResult is the outcome of one plain mpirun.
type MPIRunResult struct {
	Code           int  // exit status; -1 when killed at the timeout
	TimedOut       bool // still running after the timeout, then killed
	Stdout, Stderr string
	Elapsed        time.Duration
}

// RunMPI runs a scenario under plain mpirun (no p2ptrace) with cwd root, for
// at most timeout. At the timeout it sends SIGTERM to mpirun, which takes its
// ranks down; whatever is left of the job a few seconds later (every process
// of the session mpirun leads: the ranks run in process groups of their
// own) is killed with SIGKILL, so that nothing outlives the call.
func RunMPI(t testing.TB, root, bin string, s MPIScenario, timeout time.Duration) MPIRunResult {
	t.Helper()
	mpitest.RequireMPI(t)
	r, err := runMPI(root, bin, s, timeout)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runMPI is RunMPI without the testing.TB, safe to call from any goroutine.
func runMPI(root, bin string, s MPIScenario, timeout time.Duration) (MPIRunResult, error) {
	argv := MPIRunArgs(bin, s)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "P2PTRACE_") { // never record by accident
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, MPIEnv()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return MPIRunResult{}, fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
	}
	err := cmd.Wait()
	res := MPIRunResult{Elapsed: time.Since(start), TimedOut: ctx.Err() != nil}
	proc.KillSession(cmd.Process.Pid)
	if cmd.ProcessState == nil {
		return res, fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
	}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	res.Code = cmd.ProcessState.ExitCode()
	return res, nil
}
