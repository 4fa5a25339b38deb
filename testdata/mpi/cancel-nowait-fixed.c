/* cancel-nowait-fixed (2 ranks): the fix of cancel-nowait: the cancelled
 * receive is completed with MPI_Wait (MPI_STATUS_IGNORE: the program does
 * not ask whether the cancel took; nobody sends, so it did).
 * Correct: no findings. */
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
			fprintf(stderr, "cancel-nowait-fixed: usage: mpirun -n 2 cancel-nowait-fixed (got %d ranks)\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		MPI_Irecv(b, N, MPI_FLOAT, 1, 99, MPI_COMM_WORLD, &req); // culprit: irecv
		MPI_Cancel(&req); // culprit: cancel
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait
		printf("cancel-nowait-fixed: ok\n");
	}
	MPI_Finalize();
	return 0;
}
