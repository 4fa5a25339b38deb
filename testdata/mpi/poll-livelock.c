/* poll-livelock (2 ranks): rank 0 posts MPI_Irecv from rank 1 tag 3 and
 * polls it with MPI_Test, sleeping 1 ms between polls; rank 1 sends tag 2
 * and finalizes. The receive never completes and rank 0 never stops polling:
 * a livelock, reported as a hang naming the MPI_Test line (the monitor
 * counts a rank that only polls without success as blocked). */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, flag = 0;
	float buf[N] = {0};
	MPI_Request req;
	struct timespec ms = {0, 1000000};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "poll-livelock: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 1) {
		MPI_Send(buf, N, MPI_FLOAT, 0, 2, MPI_COMM_WORLD); // culprit: send
	} else {
		MPI_Irecv(buf, N, MPI_FLOAT, 1, 3, MPI_COMM_WORLD, &req); // culprit: irecv
		while (!flag) {
			nanosleep(&ms, NULL);
			MPI_Test(&req, &flag, MPI_STATUS_IGNORE); // culprit: test
		}
		printf("poll-livelock: ok\n");
	}
	MPI_Finalize();
	return 0;
}
