/* poll-livelock-fixed (2 ranks): rank 0 posts MPI_Irecv from rank 1 tag 3
 * and polls it with MPI_Test, sleeping 1 ms between polls; rank 1 sleeps
 * 200 ms (a slow sender: rank 0 polls many times without success), then
 * sends tag 3. Correct: no findings. */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, flag = 0;
	long polls = 0;
	float buf[N] = {0};
	MPI_Request req;
	struct timespec ms = {0, 1000000}, slow = {0, 200000000};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "poll-livelock-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 1) {
		nanosleep(&slow, NULL);
		MPI_Send(buf, N, MPI_FLOAT, 0, 3, MPI_COMM_WORLD); // culprit: send
	} else {
		MPI_Irecv(buf, N, MPI_FLOAT, 1, 3, MPI_COMM_WORLD, &req); // culprit: irecv
		while (!flag) {
			nanosleep(&ms, NULL);
			polls++;
			MPI_Test(&req, &flag, MPI_STATUS_IGNORE); // culprit: test
		}
		printf("poll-livelock-fixed: ok, %s\n", polls > 1 ? "polled" : "?");
	}
	MPI_Finalize();
	return 0;
}
