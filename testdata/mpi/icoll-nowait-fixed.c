/* icoll-nowait-fixed (2 ranks): icoll-nowait with rank 0's MPI_Iallreduce
 * completed by MPI_Wait, and the sums checked: clean. */
#include <mpi.h>
#include <stdio.h>

#define N 4

int main(int argc, char **argv)
{
	int rank, size, i, a[N], b[N];
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "icoll-nowait-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		a[i] = rank + i;
	MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	for (i = 0; i < N; i++) {
		if (b[i] != 1 + 2 * i) {
			fprintf(stderr, "icoll-nowait-fixed: rank %d: element %d = %d, want %d\n", rank, i, b[i], 1 + 2 * i);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("icoll-nowait-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
