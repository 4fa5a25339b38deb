/* pingpong (2 ranks): rank 0 sends a buffer to rank 1, which adds 1 to every
 * element and sends it back; rank 0 checks the pong. argv[1]: "small" (16
 * floats, 64 bytes, below the eager limit) or "large" (1M floats, 4 MiB, the
 * default). Correct: no findings. Prints "pingpong: ok" on rank 0. */
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
			fprintf(stderr, "pingpong: usage: mpirun -n 2 pingpong [small|large] (got %d ranks, %s)\n", size, arg);
		MPI_Finalize();
		return 2;
	}
	buf = malloc(n * sizeof *buf);
	if (rank == 0) {
		for (i = 0; i < n; i++)
			buf[i] = (float)i;
		MPI_Send(buf, n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // culprit: send
		MPI_Recv(buf, n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		for (i = 0; i < n; i++) {
			if (buf[i] != (float)i + 1) {
				fprintf(stderr, "pingpong: rank 0: pong element %d = %g, want %g\n", i, buf[i], (float)i + 1);
				MPI_Finalize();
				return 1;
			}
		}
		printf("pingpong: ok, %d bytes\n", n * 4);
	} else {
		MPI_Recv(buf, n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: ping-recv
		for (i = 0; i < n; i++)
			buf[i] += 1;
		MPI_Send(buf, n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD); // culprit: pong-send
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
