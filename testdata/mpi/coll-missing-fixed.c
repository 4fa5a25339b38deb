/* coll-missing-fixed (2 ranks): the fix of coll-missing: every rank calls
 * the MPI_Reduce (and, with "gather", the MPI_Gather), with a count of 0
 * hits where it has none. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, hits, total = 0, all[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "coll-missing-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (argc > 1 && strcmp(argv[1], "gather") == 0) {
		hits = rank == 0 ? 3 : 0;
		MPI_Gather(&hits, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD); // culprit: gather
	} else {
		hits = rank == 0 ? 0 : 5;
		MPI_Reduce(&hits, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); // culprit: reduce
	}
	if (rank == 0)
		printf("coll-missing-fixed: ok, total %d\n", total);
	MPI_Finalize();
	return 0;
}
