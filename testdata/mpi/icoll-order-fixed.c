/* icoll-order-fixed (2 ranks): icoll-order with both ranks starting the
 * MPI_Ibcast before the MPI_Barrier (the same order of collectives on
 * every rank, MPI-3.1 sec. 5.12); the Barrier completes while the Ibcast
 * may still be in progress, and the Wait after it completes the Ibcast:
 * clean. */
#include <mpi.h>
#include <stdio.h>

#define N 8

int main(int argc, char **argv)
{
	int rank, size, i, a[N];
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "icoll-order-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		a[i] = rank == 0 ? i * 5 : -1;
	MPI_Ibcast(a, N, MPI_INT, 0, MPI_COMM_WORLD, &req);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	for (i = 0; i < N; i++) {
		if (a[i] != i * 5) {
			fprintf(stderr, "icoll-order-fixed: rank %d: element %d = %d, want %d\n", rank, i, a[i], i * 5);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("icoll-order-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
