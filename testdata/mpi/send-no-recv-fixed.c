/* send-no-recv-fixed (2 ranks): the fix of send-no-recv: rank 1 receives
 * what rank 0 sends and checks it. argv[1]: "small" (16 floats) or "large"
 * (1M floats, the default). Correct: no findings. */
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
			fprintf(stderr, "send-no-recv-fixed: usage: mpirun -n 2 send-no-recv-fixed [small|large] (got %d ranks, %s)\n", size, arg);
		MPI_Finalize();
		return 2;
	}
	buf = malloc(n * sizeof *buf);
	if (rank == 0) {
		for (i = 0; i < n; i++)
			buf[i] = (float)i;
		MPI_Send(buf, n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // culprit: send
		printf("send-no-recv-fixed: ok, %d bytes\n", n * 4);
	} else {
		MPI_Recv(buf, n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		for (i = 0; i < n; i++) {
			if (buf[i] != (float)i) {
				fprintf(stderr, "send-no-recv-fixed: rank 1: element %d = %g, want %d\n", i, buf[i], i);
				MPI_Finalize();
				return 1;
			}
		}
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
