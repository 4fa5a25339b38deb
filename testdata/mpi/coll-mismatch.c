/* coll-mismatch (2 ranks): rank 0 calls MPI_Reduce (root 0) where rank 1 calls MPI_Bcast (root 0): the first collective call of the world is not the same collective on both ranks (MPI-3.1 sec. 5.1: erroneous). Open MPI 4.1.4 hangs (each rank waits for the other's part of its own collective); other implementations may abort. p2ptrace: a collective-mismatch naming both calls.
 * Fix: coll-mismatch-fixed (both ranks call MPI_Reduce). */
#include <mpi.h>
#include <stdio.h>

#define N 4

int main(int argc, char **argv)
{
	int rank, size, i, a[N], b[N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "coll-mismatch: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		a[i] = rank + i;
	if (rank == 0)
		MPI_Reduce(a, b, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); // culprit: reduce
	else
		MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD); // culprit: bcast
	if (rank == 0)
		printf("coll-mismatch: ok\n");
	MPI_Finalize();
	return 0;
}
