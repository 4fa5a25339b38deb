/* icoll-nowait (2 ranks): rank 0 starts an MPI_Iallreduce and never
 * completes its request (no MPI_Wait or MPI_Test before MPI_Finalize);
 * rank 1 waits for its own. MPI-3.1 sec. 5.12: a nonblocking collective
 * "must be completed in a separate completion call", as a nonblocking
 * point-to-point request must: p2ptrace reports rank 0's request as a
 * missing wait, as it reports a never-waited MPI_Isend. Plain mpirun: ok.
 * Fix: icoll-nowait-fixed (rank 0 waits too). */
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
			fprintf(stderr, "icoll-nowait: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		a[i] = rank + i;
	if (rank == 0) {
		MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req); // culprit: leak
		printf("icoll-nowait: ok\n");
	} else {
		MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req); // culprit: iallreduce-b
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait-b
	}
	MPI_Finalize();
	return 0;
}
