package recorder

import (
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/recorder/mpi"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// TestBlockedRanksHint: the hang of a job whose replay did not stop where it
// did names each blocked rank's call and line, and gets the collectives' hint
// when every blocked rank is in a collective (calls the trace may not hold:
// MPI_Neighbor_allgather against MPI_Barrier), one that says where to look
// otherwise (the hang kind's own speaks of a candidate, and there is none).
func TestBlockedRanksHint(t *testing.T) {
	nbr := mpi.RankEnd{Rank: 0, State: mpi.StateBlocked, Blocked: "MPI_Neighbor_allgather", Site: "u.c:45"}
	bar := mpi.RankEnd{Rank: 1, State: mpi.StateBlocked, Blocked: "MPI_Barrier", Site: "u.c:47"}
	recv := mpi.RankEnd{Rank: 1, State: mpi.StateBlocked, Blocked: "MPI_Recv", Site: "u.c:50"}
	done := mpi.RankEnd{Rank: 2, State: mpi.StateFinalized}
	winWait := mpi.RankEnd{Rank: 0, State: mpi.StateBlocked, Blocked: "MPI_Win_wait", Site: "r.c:48"}
	winFree := mpi.RankEnd{Rank: 1, State: mpi.StateBlocked, Blocked: "MPI_Win_free", Site: "r.c:58"}
	getStatus := mpi.RankEnd{Rank: 0, State: mpi.StateBlocked, Blocked: "MPI_Request_get_status", Site: "p.c:30"}
	for _, tc := range []struct {
		name  string
		ranks []mpi.RankEnd
		hint  string
	}{
		{"collectives", []mpi.RankEnd{nbr, bar, done}, verdict.CollectiveMismatch.Hint()},
		{"a receive among them", []mpi.RankEnd{nbr, recv}, libraryHangHint},
		// MPI_Win_free is collective, MPI_Win_wait is not: it waits for
		// the MPI_Win_complete of the ranks its post named.
		{"one-sided synchronization", []mpi.RankEnd{winWait, winFree, done}, mpi.RMASyncHint},
		// A poll is no collective call (it was, as a marked call).
		{"a poll among them", []mpi.RankEnd{getStatus, bar}, libraryHangHint},
	} {
		f := blockedRanks(&mpi.MergeResult{Ranks: tc.ranks}, 3*time.Second)
		if f.Kind != verdict.Hang || f.Hint != tc.hint {
			t.Errorf("%s: %s with hint %q, want hang with %q", tc.name, f.Kind, f.Hint, tc.hint)
		}
		if len(f.Blocked) != 2 || f.Blocked[0].Call.Call != tc.ranks[0].Blocked || f.Blocked[0].Call.Site != tc.ranks[0].Site ||
			f.Blocked[1].Call.Call != tc.ranks[1].Blocked || f.Blocked[1].Call.Site != tc.ranks[1].Site {
			t.Errorf("%s: blocked %+v, want ranks 0 and 1 at their calls and lines", tc.name, f.Blocked)
		}
	}
}
