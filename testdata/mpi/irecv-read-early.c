/* irecv-read-early (2 ranks): rank 1 posts an MPI_Irecv of 16 floats and reads the last element before MPI_Wait, trusting that the data is there (rank 0 sent it a millisecond earlier). It checks what it read and fails (exit 1) if the data had not landed. Fix: irecv-read-early-fixed. */
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
			fprintf(stderr, "irecv-read-early: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (i = 0; i < N; i++)
			buf[i] = (float)(i + 1);
		/* (sent once rank 1 is past MPI_Init, which progresses: a
		   message that came during it would be matched at the Irecv) */
		MPI_Recv(NULL, 0, MPI_FLOAT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(buf, N, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // culprit: send
		MPI_Finalize();
		return 0;
	}
	for (i = 0; i < N; i++)
		buf[i] = 0;
	MPI_Send(NULL, 0, MPI_FLOAT, 0, 1, MPI_COMM_WORLD);
	nanosleep(&ms, NULL); /* rank 0's message was sent a millisecond ago */
	MPI_Irecv(buf, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &req); // culprit: irecv
	early = buf[N - 1]; // culprit: read
	MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait
	if (early != (float)N) {
		fprintf(stderr, "irecv-read-early: rank 1: read before Wait: element %d = %g, want %d\n", N - 1, early, N);
		MPI_Finalize();
		return 1;
	}
	printf("irecv-read-early: ok\n");
	MPI_Finalize();
	return 0;
}
