/* coll-missing (2 ranks): every rank is to add its count of local hits into
 * rank 0's total with MPI_Reduce, but a rank with no hits skips the call, and
 * rank 0 (the root) has none. MPI-3.1 sec. 5.1: every member of the
 * communicator calls each of its collectives. Under Open MPI rank 1's
 * Reduce returns at once (its part goes out eagerly), so the job completes
 * and rank 0's total is wrong: the recording names the Reduce that rank 0
 * finished without calling (a collective-mismatch), not a hang.
 * argv[1] "gather": the same with MPI_Gather, which rank 1 skips: rank 0,
 *   the root, waits in it for rank 1, which has finished: the job hangs, and
 *   the finding is the same missing call.
 * Fix: coll-missing-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, hits, total = 0, all[2];
	int gather;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "coll-missing: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	gather = argc > 1 && strcmp(argv[1], "gather") == 0;
	if (gather) {
		hits = rank == 0 ? 3 : 0; /* rank 1 has none */
		if (hits > 0)
			MPI_Gather(&hits, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD); // culprit: gather
	} else {
		hits = rank == 0 ? 0 : 5; /* the root has none */
		if (hits > 0)
			MPI_Reduce(&hits, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); // culprit: reduce
	}
	if (rank == 0)
		printf("coll-missing: ok, total %d\n", total);
	MPI_Finalize();
	return 0;
}
