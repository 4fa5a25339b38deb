/* isend-mutate-fixed (2 ranks): rank 0 the fix of isend-mutate: rank 0 writes into the buffer only after MPI_Wait. Correct: no findings. */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (1 << 20)

int main(int argc, char **argv)
{
	int rank, size, i;
	float *buf;
	MPI_Request req;
	struct timespec ms = {0, 1000000};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "isend-mutate-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	buf = malloc(N * sizeof *buf);
	if (rank == 0) {
		nanosleep(&ms, NULL); /* rank 1's Recv is posted first */
		for (i = 0; i < N; i++)
			buf[i] = (float)i;
		MPI_Isend(buf, N, MPI_FLOAT, 1, 0, MPI_COMM_WORLD, &req); // culprit: isend
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait
		buf[0] = -1; // culprit: write
	} else {
		for (i = 0; i < N; i++)
			buf[i] = -2;
		MPI_Recv(buf, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		for (i = 0; i < N; i++) {
			if (buf[i] != (float)i) {
				fprintf(stderr, "isend-mutate-fixed: rank 1: corrupted data: element %d = %g, want %d\n", i, buf[i], i);
				MPI_Finalize();
				return 1;
			}
		}
		printf("isend-mutate-fixed: ok\n");
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
