/* headtohead-small (2 ranks): both ranks Send then Recv a small message (16 floats, 64 bytes, below OpenMPI's 4096-byte shared-memory eager limit): eager buffering hides the unsafe order, the run completes.
 * Fix: headtohead-fixed (Isend+Irecv+Waitall), ordered-exchange, sendrecv-exchange. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N (16)

int main(int argc, char **argv)
{
	int rank, size, peer, i;
	float *sbuf, *rbuf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "headtohead-small: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	sbuf = malloc(N * sizeof *sbuf);
	rbuf = malloc(N * sizeof *rbuf);
	for (i = 0; i < N; i++)
		sbuf[i] = (float)(rank * 10 + i % 7);
	peer = 1 - rank;
	if (rank == 0) {
		MPI_Send(sbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD); // culprit: send-a
	} else {
		MPI_Send(sbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD); // culprit: send-b
	}
	MPI_Recv(rbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
	for (i = 0; i < N; i++) {
		if (rbuf[i] != (float)(peer * 10 + i % 7)) {
			fprintf(stderr, "headtohead-small: rank %d: element %d = %g, want %d\n", rank, i, rbuf[i], peer * 10 + i % 7);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("headtohead-small: ok\n");
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
