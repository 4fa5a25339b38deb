/* anysource-last-sender (4 ranks): ranks 1, 2 and 3 each send their rank
 * to rank 0 from one line, rank k after (k-1) x 0.2 s, so they usually
 * arrive in rank order. Rank 0 receives the three from MPI_ANY_SOURCE at one
 * line and assumes the last is rank 3's. Only the data tells: every
 * sender runs the same code, and one order with another sender first is
 * fine (rank 2's first: 2, 1, 3), another is not (rank 3's first: 3, 1, 2
 * aborts). check re-runs one alternative of each pair of sites, then each
 * further sender: the re-run that pins the first receive to rank 3 aborts,
 * a message-race with the abort as evidence. Correct version:
 * anysource-race (it checks who sent what). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, i, got = -1;
	double t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 4) {
		if (rank == 0)
			fprintf(stderr, "anysource-last-sender: needs 4 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (i = 1; i < size; i++)
			MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-any
		if (got != size - 1) {
			fprintf(stderr, "anysource-last-sender: rank 0: the last message is rank %d's, want rank %d's\n", got, size - 1);
			MPI_Abort(MPI_COMM_WORLD, 3); // culprit: abort
		}
		printf("anysource-last-sender: ok\n");
	} else {
		for (t = MPI_Wtime(); MPI_Wtime() - t < 0.2 * (rank - 1);)
			;
		MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); // culprit: send
	}
	MPI_Finalize();
	return 0;
}
