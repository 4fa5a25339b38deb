/* wrong-tag-fixed (2 ranks): the fix of wrong-tag: rank 0 sends 16 floats with tag 0 and rank 1 receives tag 0. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>

#define N 16
#define SEND_TAG 0
#define RECV_TAG 0

int main(int argc, char **argv)
{
	int rank, size, i;
	float buf[N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "wrong-tag-fixed: needs 2 ranks, got %d\n", size);
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
				fprintf(stderr, "wrong-tag-fixed: rank 1: element %d = %g, want %d\n", i, buf[i], i);
				MPI_Finalize();
				return 1;
			}
		}
		printf("wrong-tag-fixed: ok\n");
	}
	MPI_Finalize();
	return 0;
}
