package recorder_test

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/p2ptrace/p2ptrace/internal/mpitest"
	"github.com/p2ptrace/p2ptrace/recorder"
	"github.com/p2ptrace/p2ptrace/replay"
	"github.com/p2ptrace/p2ptrace/verdict"
)

// anySourceAssume: rank 0 receives from MPI_ANY_SOURCE twice and assumes
// the first message is rank 1's. The calls are the same in either order
// (the model replays the other order cleanly): only the data tells.
const anySourceAssume = `#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
	int rank, first, x;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Recv(&first, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* RECV */
		MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (first != 1) {
			fprintf(stderr, "rank 0: first message from %d, want rank 1\n", first);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
	} else {
		if (rank == 2) {
			double t = MPI_Wtime();
			while (MPI_Wtime() - t < 0.2) {
			}
		}
		MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
`

// anySourceEither: the same exchange, correct whatever the order.
const anySourceEither = `#include <mpi.h>
int main(int argc, char **argv) {
	int rank, a, b;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		MPI_Recv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* RECV */
		MPI_Recv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (a + b != 3)
			MPI_Abort(MPI_COMM_WORLD, 3);
	} else {
		if (rank == 2) {
			double t = MPI_Wtime();
			while (MPI_Wtime() - t < 0.2) {
			}
		}
		MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
`

// TestMPIRaceJudgedByRerunningTheJob: an MPI_ANY_SOURCE race whose other
// order the model replays cleanly is judged by re-running the job with the
// receive pinned to the other sender (the shim's P2PTRACE_FORCE_MATCH):
// the job that aborts that way is a message-race with the evidence; the
// correct one is a note, no finding.
func TestMPIRaceJudgedByRerunningTheJob(t *testing.T) {
	mpitest.RequireMPI(t)
	dir := t.TempDir()
	check := func(name, src string) (*replay.Report, string) {
		exe, source := mpiProgram(t, dir, name, src)
		out := filepath.Join(dir, name+".db")
		sum, err := recorder.RecordMPI(context.Background(), recorder.MPIOptions{Program: exe, Ranks: 3, Output: out,
			HangTimeout: 10 * time.Second, Stdout: io.Discard, Stderr: io.Discard})
		if err != nil || !sum.Clean() {
			t.Fatalf("record %s: %v\n%s", name, err, sum.Text())
		}
		tr, err := replay.OpenTrace(out)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		rerun, why := recorder.Rerunner(context.Background(), tr)
		if rerun == nil {
			t.Fatalf("%s cannot be re-run: %s", name, why)
		}
		rep, err := replay.CheckTrace(tr, replay.CheckOptions{Rerun: rerun})
		if err != nil {
			t.Fatal(err)
		}
		return rep, filepath.Base(source) + ":" + strconv.Itoa(lineOf(t, src, "RECV"))
	}

	rep, line := check("assume", anySourceAssume)
	var race *verdict.Finding
	for i := range rep.Findings {
		if rep.Findings[i].Kind == verdict.MessageRace {
			race = &rep.Findings[i]
		}
	}
	if race == nil || race.Ranks[0] != 0 || !strings.HasSuffix(race.Ops[0].Site, line) ||
		!strings.Contains(race.Message, "re-run with this match forced, the program failed") || !strings.Contains(race.Message, "MPI_Abort") {
		t.Fatalf("want a message-race at %s with the re-run's evidence:\n%s", line, rep.Text())
	}

	rep, line = check("either", anySourceEither)
	if len(rep.Findings) != 0 || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], line+" is nondeterministic: 1 alternative(s) re-run, all clean") {
		t.Fatalf("a correct AnySource exchange: want no findings and one note at %s:\n%s", line, rep.Text())
	}
}
