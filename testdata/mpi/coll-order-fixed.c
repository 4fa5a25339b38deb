/* coll-order-fixed (2 ranks): coll-order with rank 1 calling MPI_Bcast before its MPI_Recv: both ranks reach the Bcast before anyone waits for a message, so no order of synchronization can deadlock. Correct: no findings, also under sync. */
#include <mpi.h>
#include <stdio.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, i, a[N], b[N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "coll-order-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		a[i] = rank == 0 ? i * 3 : -1;
	if (rank == 0) {
		MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
		MPI_Send(a, N, MPI_INT, 1, 0, MPI_COMM_WORLD);
	} else {
		MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
		MPI_Recv(b, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (i = 0; i < N; i++) {
			if (a[i] != i * 3 || b[i] != i * 3) {
				fprintf(stderr, "coll-order-fixed: rank 1: element %d = %d and %d, want %d\n", i, a[i], b[i], i * 3);
				MPI_Finalize();
				return 1;
			}
		}
		printf("coll-order-fixed: ok\n");
	}
	MPI_Finalize();
	return 0;
}
