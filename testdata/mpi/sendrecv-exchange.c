/* sendrecv-exchange (2 ranks): both ranks exchange 1M floats (4 MiB) with one
 * MPI_Sendrecv and check the status (source, count) and the data.
 * Correct: no findings, even under sync and delay. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)

int main(int argc, char **argv)
{
	int rank, size, peer, i, count;
	float *sbuf, *rbuf;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "sendrecv-exchange: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	sbuf = malloc(N * sizeof *sbuf);
	rbuf = malloc(N * sizeof *rbuf);
	for (i = 0; i < N; i++)
		sbuf[i] = (float)(rank * 10 + i % 7);
	peer = 1 - rank;
	MPI_Sendrecv(sbuf, N, MPI_FLOAT, peer, 0, rbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, &st); // culprit: sendrecv
	MPI_Get_count(&st, MPI_FLOAT, &count);
	if (st.MPI_SOURCE != peer || count != N) {
		fprintf(stderr, "sendrecv-exchange: rank %d: status source %d count %d, want %d %d\n", rank, st.MPI_SOURCE, count, peer, N);
		MPI_Finalize();
		return 1;
	}
	for (i = 0; i < N; i++) {
		if (rbuf[i] != (float)(peer * 10 + i % 7)) {
			fprintf(stderr, "sendrecv-exchange: rank %d: element %d = %g, want %d\n", rank, i, rbuf[i], peer * 10 + i % 7);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("sendrecv-exchange: ok\n");
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
