/* anysource-assume (3 ranks): ranks 1 and 2 each send their rank to rank 0,
 * which receives from MPI_ANY_SOURCE twice and assumes the first message is
 * rank 1's (rank 2 is slower, so it usually is). The calls are the same in
 * either order; only the data tells: when rank 2 comes first the program
 * aborts. check replays the other order cleanly, then re-runs the job with
 * that receive pinned to rank 2: a message-race with the abort as evidence.
 * With the argument "persistent", rank 0's first receive is a persistent
 * one (MPI_Recv_init from MPI_ANY_SOURCE, MPI_Start, MPI_Wait): the re-run
 * pins that start. Correct version: anysource-race (it checks who sent what). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, first, second;
	double t;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "anysource-assume: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		if (argc > 1 && strcmp(argv[1], "persistent") == 0) {
			MPI_Recv_init(&first, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &req);
			MPI_Start(&req); // culprit: start-any
			MPI_Wait(&req, MPI_STATUS_IGNORE);
			MPI_Request_free(&req);
		} else {
			MPI_Recv(&first, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-any
		}
		MPI_Recv(&second, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (first != 1) {
			fprintf(stderr, "anysource-assume: rank 0: the first message is rank %d's, want rank 1's\n", first);
			MPI_Abort(MPI_COMM_WORLD, 3); // culprit: abort
		}
		printf("anysource-assume: ok\n");
	} else {
		if (rank == 2)
			for (t = MPI_Wtime(); MPI_Wtime() - t < 0.2;)
				;
		MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); // culprit: send
	}
	MPI_Finalize();
	return 0;
}
