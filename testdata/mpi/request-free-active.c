/* request-free-active (2 ranks): MPI-3.1 sec. 3.7.3 (its Example 3.12):
 * freeing an active send request is legitimate; the send still completes,
 * and the program learns of it otherwise. Three rounds: rank 0 sends an int
 * with MPI_Isend (argv[1] "persistent": MPI_Send_init + MPI_Start) and frees
 * the request at once with MPI_Request_free, then waits for rank 1's reply;
 * rank 1 receives it (MPI_Recv) and replies (MPI_Send). The reply tells rank
 * 0 its message arrived, so it writes the buffer for the next round.
 * Correct: no findings (no missing-wait, no request-leak). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define ROUNDS 3

int main(int argc, char **argv)
{
	int rank, size, i, out, in, persistent;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	persistent = argc > 1 && strcmp(argv[1], "persistent") == 0;
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "request-free-active: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < ROUNDS; i++) {
		if (rank == 0) {
			out = 10 + i; /* the previous round's reply came: the send is over */
			if (persistent) {
				MPI_Send_init(&out, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req); // culprit: send-init
				MPI_Start(&req); // culprit: start
			} else {
				MPI_Isend(&out, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req); // culprit: isend
			}
			MPI_Request_free(&req); // culprit: free
			MPI_Recv(&in, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-reply
		} else {
			MPI_Recv(&in, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
			if (in != 10 + i) {
				fprintf(stderr, "request-free-active: round %d: rank 1 got %d, want %d\n", i, in, 10 + i);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
			MPI_Send(&in, 1, MPI_INT, 0, 1, MPI_COMM_WORLD); // culprit: send-reply
		}
	}
	if (rank == 0)
		printf("request-free-active: ok\n");
	MPI_Finalize();
	return 0;
}
