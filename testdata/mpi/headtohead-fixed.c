/* headtohead-fixed (2 ranks): the fix of headtohead-small/-large with
 * nonblocking calls: both ranks Irecv, Isend, then Waitall, so neither depends
 * on the runtime buffering its send. argv[1]: "small" (16 floats) or "large"
 * (1M floats, the default). Correct: no findings, even under sync. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, peer, i, n;
	const char *arg = argc > 1 ? argv[1] : "large";
	float *sbuf, *rbuf;
	MPI_Request reqs[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	n = strcmp(arg, "small") == 0 ? 16 : strcmp(arg, "large") == 0 ? 1 << 20 : -1;
	if (size != 2 || n < 0) {
		if (rank == 0)
			fprintf(stderr, "headtohead-fixed: usage: mpirun -n 2 headtohead-fixed [small|large] (got %d ranks, %s)\n", size, arg);
		MPI_Finalize();
		return 2;
	}
	sbuf = malloc(n * sizeof *sbuf);
	rbuf = malloc(n * sizeof *rbuf);
	for (i = 0; i < n; i++)
		sbuf[i] = (float)(rank * 10 + i % 7);
	peer = 1 - rank;
	MPI_Irecv(rbuf, n, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, &reqs[0]); // culprit: irecv
	MPI_Isend(sbuf, n, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, &reqs[1]); // culprit: isend
	MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE); // culprit: waitall
	for (i = 0; i < n; i++) {
		if (rbuf[i] != (float)(peer * 10 + i % 7)) {
			fprintf(stderr, "headtohead-fixed: rank %d: element %d = %g, want %d\n", rank, i, rbuf[i], peer * 10 + i % 7);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("headtohead-fixed: ok, %d bytes\n", n * 4);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
