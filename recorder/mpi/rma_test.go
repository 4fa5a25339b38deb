package mpi

import (
	"strings"
	"testing"

	"github.com/p2ptrace/p2ptrace/verdict"
)

// TestErrorFindingRMASync: an MPI_ERR_RMA_SYNC in a marked RMA call is an
// invalid call at its line that says the rule of MPI-3.1 sec. 11.5; other
// errors do not get that rule.
func TestErrorFindingRMASync(t *testing.T) {
	re := RankEnd{Rank: 1, State: StateErrored, Error: "MPI_ERR_RMA_SYNC: error executing rma sync", Site: "rma-sync.c:54"}
	f := errorFinding(re, "MPI_Put")
	if f.Kind != verdict.InvalidCall || len(f.Ops) != 1 || f.Ops[0].Call != "MPI_Put" || f.Ops[0].Site != "rma-sync.c:54" {
		t.Fatalf("finding %+v, want an invalid call of MPI_Put at rma-sync.c:54", f)
	}
	for _, want := range []string{"rank 1: MPI error in MPI_Put: MPI_ERR_RMA_SYNC", "sec. 11.5", "access epoch"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q does not say %q", f.Message, want)
		}
	}
	re.Error = "MPI_ERR_RANK: invalid rank"
	if f := errorFinding(re, "MPI_Put"); strings.Contains(f.Message, "11.5") {
		t.Errorf("an MPI_ERR_RANK says the RMA rule: %q", f.Message)
	}
}

// TestOneSidedCallClasses: which marked calls are collective (the
// collectives' hint) and which wait for other ranks' one-sided
// synchronization (the one-sided hint).
func TestOneSidedCallClasses(t *testing.T) {
	for _, tc := range []struct {
		call       string
		collective bool
		rmaSync    bool
	}{
		{"MPI_Win_create", true, false},
		{"MPI_Win_allocate_shared", true, false},
		{"MPI_Win_create_dynamic", true, false},
		{"MPI_Win_fence", true, false},
		{"MPI_Win_free", true, false},
		{"MPI_Put", false, false},
		{"MPI_Rget_accumulate", false, false},
		{"MPI_Win_lock", false, true},
		{"MPI_Win_unlock_all", false, true},
		{"MPI_Win_flush_local_all", false, true},
		{"MPI_Win_sync", false, false},
		{"MPI_Win_post", false, false},
		{"MPI_Win_start", false, true},
		{"MPI_Win_complete", false, true},
		{"MPI_Win_wait", false, true},
		{"MPI_Request_get_status", false, false},
		{"MPI_Recv", false, false},
	} {
		if got := CollectiveCall(tc.call); got != tc.collective {
			t.Errorf("CollectiveCall(%s) = %v, want %v", tc.call, got, tc.collective)
		}
		if got := RMASyncCall(tc.call); got != tc.rmaSync {
			t.Errorf("RMASyncCall(%s) = %v, want %v", tc.call, got, tc.rmaSync)
		}
	}
}
