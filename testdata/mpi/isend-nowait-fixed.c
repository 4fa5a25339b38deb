/* isend-nowait-fixed (2 ranks): the fix of isend-nowait: every request is
 * waited. argv[1] "leak" (the default): rank 0's Isend and rank 1's Irecv of
 * 16 floats are both waited. "free": rank 1 waits for its 1M-float Irecv
 * instead of freeing the request, and checks; rank 0's Isend is waited.
 * Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL 16
#define LARGE (1 << 20)

int main(int argc, char **argv)
{
	int rank, size, i, n;
	const char *mode = argc > 1 ? argv[1] : "leak";
	float *buf;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || (strcmp(mode, "leak") != 0 && strcmp(mode, "free") != 0)) {
		if (rank == 0)
			fprintf(stderr, "isend-nowait-fixed: usage: mpirun -n 2 isend-nowait-fixed [leak|free] (got %d ranks, %s)\n", size, mode);
		MPI_Finalize();
		return 2;
	}
	n = strcmp(mode, "leak") == 0 ? SMALL : LARGE;
	buf = malloc(n * sizeof *buf);
	if (rank == 0) {
		for (i = 0; i < n; i++)
			buf[i] = (float)i;
		MPI_Isend(buf, n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD, &req); // culprit: isend
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait-isend
		printf("isend-nowait-fixed: ok, %s\n", mode);
	} else {
		MPI_Irecv(buf, n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &req); // culprit: irecv
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait-irecv
		for (i = 0; i < n; i++) {
			if (buf[i] != (float)i) {
				fprintf(stderr, "isend-nowait-fixed: rank 1: element %d = %g, want %d\n", i, buf[i], i);
				MPI_Finalize();
				return 1;
			}
		}
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
