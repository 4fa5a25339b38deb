/* poll-livelock (2 ranks): rank 0 posts MPI_Irecv from rank 1 tag 3 and
 * polls it with MPI_Test, sleeping 1 ms between polls; rank 1 sends tag 2
 * and finalizes. The receive never completes and rank 0 never stops polling:
 * a livelock, reported as a hang naming the MPI_Test line (the monitor
 * counts a rank that only polls without success as blocked). With the
 * argument get-status, rank 0 polls with MPI_Request_get_status (which does
 * not retire the request) instead: the same livelock, at that line. With
 * busy, it polls with MPI_Testany in a tight loop, no sleep: millions of
 * calls a second, of which the shim records a few (runs of fruitless
 * polls are thinned), so the job is ended as hung within seconds. */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, flag = 0;
	float buf[N] = {0};
	MPI_Request req;
	struct timespec ms = {0, 1000000};

	int get_status = argc > 1 && strcmp(argv[1], "get-status") == 0;
	int busy = argc > 1 && strcmp(argv[1], "busy") == 0;
	int index;

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
			if (busy) {
				MPI_Testany(1, &req, &index, &flag, MPI_STATUS_IGNORE); // culprit: testany
				continue;
			}
			nanosleep(&ms, NULL);
			if (get_status)
				MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE); // culprit: get-status
			else
				MPI_Test(&req, &flag, MPI_STATUS_IGNORE); // culprit: test
		}
		printf("poll-livelock: ok\n");
	}
	MPI_Finalize();
	return 0;
}
