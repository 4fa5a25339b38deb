/* cancel-nowait (2 ranks): a cancelled receive never completed. Rank 0
 * posts a receive nobody sends to and cancels it, but never waits, tests or
 * frees the request before MPI_Finalize: MPI_Cancel only marks it, the
 * request must still be completed (MPI 4.0 sec. 3.8.4). Exit 0 under plain
 * mpirun (Open MPI says nothing). Fix: cancel-nowait-fixed. */
#include <mpi.h>
#include <stdio.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size;
	float b[N];
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "cancel-nowait: usage: mpirun -n 2 cancel-nowait (got %d ranks)\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		MPI_Irecv(b, N, MPI_FLOAT, 1, 99, MPI_COMM_WORLD, &req); // culprit: irecv
		MPI_Cancel(&req); // culprit: cancel
		printf("cancel-nowait: ok\n");
	}
	MPI_Finalize();
	return 0;
}
