/* irecv-read-early-fixed (2 ranks): the fix of irecv-read-early: rank 1 reads its Irecv buffer only after MPI_Wait. Correct: no findings. */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, i;
	float buf[N], early;
	MPI_Request req;
	struct timespec ms = {0, 1000000};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "irecv-read-early-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (i = 0; i < N; i++)
			buf[i] = (float)(i + 1);
		MPI_Send(buf, N, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // culprit: send
		MPI_Finalize();
		return 0;
	}
	for (i = 0; i < N; i++)
		buf[i] = 0;
	nanosleep(&ms, NULL); /* rank 0's message was sent a millisecond ago */
	MPI_Irecv(buf, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &req); // culprit: irecv
	MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait
	early = buf[N - 1]; // culprit: read
	if (early != (float)N) {
		fprintf(stderr, "irecv-read-early-fixed: rank 1: read before Wait: element %d = %g, want %d\n", N - 1, early, N);
		MPI_Finalize();
		return 1;
	}
	printf("irecv-read-early-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
