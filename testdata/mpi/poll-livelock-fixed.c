/* poll-livelock-fixed (2 ranks): rank 0 posts MPI_Irecv from rank 1 tag 3
 * and polls it with MPI_Test, sleeping 1 ms between polls; rank 1 sleeps
 * 200 ms (a slow sender: rank 0 polls many times without success), then
 * sends tag 3. Correct: no findings. With the argument get-status, rank 0
 * polls with MPI_Request_get_status, then retires the request with MPI_Wait;
 * with busy, with MPI_Testany in a tight loop (200 ms of it). */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, flag = 0;
	long polls = 0;
	float buf[N] = {0};
	MPI_Request req;
	struct timespec ms = {0, 1000000}, slow = {0, 200000000};

	int get_status = argc > 1 && strcmp(argv[1], "get-status") == 0;
	int busy = argc > 1 && strcmp(argv[1], "busy") == 0;
	int index;

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
			if (busy) {
				MPI_Testany(1, &req, &index, &flag, MPI_STATUS_IGNORE); // culprit: testany
				continue;
			}
			nanosleep(&ms, NULL);
			polls++;
			if (get_status)
				MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE); // culprit: get-status
			else
				MPI_Test(&req, &flag, MPI_STATUS_IGNORE); // culprit: test
		}
		if (get_status)
			MPI_Wait(&req, MPI_STATUS_IGNORE); /* get_status leaves the request to retire */
		printf("poll-livelock-fixed: ok, %s\n", polls > 1 ? "polled" : "?");
	}
	MPI_Finalize();
	return 0;
}
