/* ordered-exchange (2 ranks): the textbook fix of headtohead: rank 0 sends
 * then receives, rank 1 receives then sends, 1M floats (4 MiB) each way.
 * Correct: no findings, even under sync and delay. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)

int main(int argc, char **argv)
{
	int rank, size, peer, i;
	float *sbuf, *rbuf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "ordered-exchange: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	sbuf = malloc(N * sizeof *sbuf);
	rbuf = malloc(N * sizeof *rbuf);
	for (i = 0; i < N; i++)
		sbuf[i] = (float)(rank * 10 + i % 7);
	peer = 1 - rank;
	if (rank == 0) {
		MPI_Send(sbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD); // culprit: send-0
		MPI_Recv(rbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-0
	} else {
		MPI_Recv(rbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-1
		MPI_Send(sbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD); // culprit: send-1
	}
	for (i = 0; i < N; i++) {
		if (rbuf[i] != (float)(peer * 10 + i % 7)) {
			fprintf(stderr, "ordered-exchange: rank %d: element %d = %g, want %d\n", rank, i, rbuf[i], peer * 10 + i % 7);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("ordered-exchange: ok\n");
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
