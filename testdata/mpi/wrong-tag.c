/* wrong-tag (2 ranks): rank 0 sends 16 floats to rank 1 with tag 0; rank 1 receives from rank 0 with tag 1. The small send completes eagerly, rank 1 waits forever: the run hangs. Fix: wrong-tag-fixed. */
#include <mpi.h>
#include <stdio.h>

#define N 16
#define SEND_TAG 0
#define RECV_TAG 1

int main(int argc, char **argv)
{
	int rank, size, i;
	float buf[N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "wrong-tag: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (i = 0; i < N; i++)
			buf[i] = (float)i;
		MPI_Send(buf, N, MPI_FLOAT, 1, SEND_TAG, MPI_COMM_WORLD); // culprit: send
	} else {
		MPI_Recv(buf, N, MPI_FLOAT, 0, RECV_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		for (i = 0; i < N; i++) {
			if (buf[i] != (float)i) {
				fprintf(stderr, "wrong-tag: rank 1: element %d = %g, want %d\n", i, buf[i], i);
				MPI_Finalize();
				return 1;
			}
		}
		printf("wrong-tag: ok\n");
	}
	MPI_Finalize();
	return 0;
}
