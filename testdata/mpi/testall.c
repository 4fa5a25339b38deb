/* testall (2 ranks): both ranks post MPI_Irecv and MPI_Isend of 1M floats
 * (4 MiB) to each other, then poll with MPI_Testall, doing a slice of local
 * work between polls, until both requests are done; then check the data.
 * Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)

int main(int argc, char **argv)
{
	int rank, size, peer, i, flag = 0;
	long polls = 0;
	double work = 0;
	float *sbuf, *rbuf;
	MPI_Request reqs[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "testall: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	peer = 1 - rank;
	sbuf = malloc(N * sizeof *sbuf);
	rbuf = malloc(N * sizeof *rbuf);
	for (i = 0; i < N; i++)
		sbuf[i] = (float)(rank * 10 + i % 7);
	MPI_Irecv(rbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, &reqs[0]); // culprit: irecv
	MPI_Isend(sbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, &reqs[1]); // culprit: isend
	while (!flag) {
		for (i = 0; i < 1000; i++) /* a slice of local work that touches neither buffer */
			work += i * 0.5;
		polls++;
		MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE); // culprit: testall
	}
	for (i = 0; i < N; i++) {
		if (rbuf[i] != (float)(peer * 10 + i % 7)) {
			fprintf(stderr, "testall: rank %d: element %d = %g, want %d\n", rank, i, rbuf[i], peer * 10 + i % 7);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("testall: ok, %s\n", polls > 0 && work > 0 ? "polled" : "?");
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
