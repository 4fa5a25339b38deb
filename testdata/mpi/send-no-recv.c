/* send-no-recv (2 ranks): rank 0 sends to rank 1, which finishes without
 * receiving. argv[1]: "large" (1M floats, 4 MiB, the default): the
 * rendezvous Send never completes, the run hangs. "small" (16 floats, 64
 * bytes): the eager Send completes and the message is left unmatched at
 * MPI_Finalize; the run exits 0. Fix: send-no-recv-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, i, n;
	const char *arg = argc > 1 ? argv[1] : "large";
	float *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	n = strcmp(arg, "small") == 0 ? 16 : strcmp(arg, "large") == 0 ? 1 << 20 : -1;
	if (size != 2 || n < 0) {
		if (rank == 0)
			fprintf(stderr, "send-no-recv: usage: mpirun -n 2 send-no-recv [small|large] (got %d ranks, %s)\n", size, arg);
		MPI_Finalize();
		return 2;
	}
	buf = malloc(n * sizeof *buf);
	for (i = 0; i < n; i++)
		buf[i] = (float)i;
	if (rank == 0) {
		MPI_Send(buf, n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // culprit: send
		printf("send-no-recv: ok, %d bytes\n", n * 4);
	}
	/* rank 1: forgets to receive */
	free(buf);
	MPI_Finalize();
	return 0;
}
