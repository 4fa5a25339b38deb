/* ready-send-fixed (2 ranks): the fix of ready-send: rank 1 posts its
 * MPI_Irecv, then both meet in a barrier, and only then does rank 0 call
 * MPI_Rsend: the barrier orders the receive's post before the ready send
 * (MPI-3.1 sec. 3.4). Correct: no findings. */
#include <mpi.h>
#include <stdio.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, i;
	float buf[N];
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "ready-send-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (i = 0; i < N; i++)
			buf[i] = (float)i;
		MPI_Barrier(MPI_COMM_WORLD); // (rank 1's receive is posted)
		MPI_Rsend(buf, N, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
	} else {
		MPI_Irecv(buf, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &req);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		for (i = 0; i < N; i++) {
			if (buf[i] != (float)i) {
				fprintf(stderr, "ready-send-fixed: rank 1: element %d = %g\n", i, buf[i]);
				MPI_Finalize();
				return 1;
			}
		}
		printf("ready-send-fixed: ok\n");
	}
	MPI_Finalize();
	return 0;
}
