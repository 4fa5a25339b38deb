/* anysource-irecv-pair (3 ranks): rank 0 posts a nonblocking receive from
 * MPI_ANY_SOURCE, joins a barrier, posts a second one and waits for both;
 * ranks 1 and 2 each send it one message after the barrier. Correct whichever receive takes which message: both
 * complete, and rank 0 only checks that it got one message of each.
 * Which receive takes which is a race, so check re-runs the job with each
 * receive pinned to its other sender. Pinned, the second receive may wait
 * for a message the first (posted earlier, from any rank) has taken
 * already: such a re-run hangs because of the pin, not the program, and is
 * no evidence (the forced match did not happen). So: no finding. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, got[2] = {-1, -1}, msg;
	MPI_Request req[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "anysource-irecv-pair: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		MPI_Irecv(&got[0], 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &req[0]); // culprit: first-any
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Irecv(&got[1], 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &req[1]); // culprit: second-any
		MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
		if (got[0] + got[1] != 3 || got[0] == got[1]) {
			fprintf(stderr, "anysource-irecv-pair: rank 0 got %d and %d\n", got[0], got[1]);
			MPI_Finalize();
			return 1;
		}
		printf("anysource-irecv-pair: ok, rank %d's message came first\n", got[0]);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		msg = rank;
		MPI_Send(&msg, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); // culprit: send
	}
	MPI_Finalize();
	return 0;
}
