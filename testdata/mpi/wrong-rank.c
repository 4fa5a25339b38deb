/* wrong-rank (3 ranks): rank 0 means to send 16 floats to rank 1 but sends
 * them to rank 2, which never receives; the small send completes eagerly and
 * rank 1 waits forever in its Recv. The run hangs. Fix: wrong-rank-fixed. */
#include <mpi.h>
#include <stdio.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, i;
	float buf[N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "wrong-rank: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (i = 0; i < N; i++)
			buf[i] = (float)i;
		MPI_Send(buf, N, MPI_FLOAT, 2, 0, MPI_COMM_WORLD); // culprit: send
	} else if (rank == 1) {
		MPI_Recv(buf, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		for (i = 0; i < N; i++) {
			if (buf[i] != (float)i) {
				fprintf(stderr, "wrong-rank: rank 1: element %d = %g, want %d\n", i, buf[i], i);
				MPI_Finalize();
				return 1;
			}
		}
		printf("wrong-rank: ok\n");
	}
	MPI_Finalize();
	return 0;
}
