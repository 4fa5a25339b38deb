/* anysource-race-fixed (3 ranks): the fix of anysource-race: rank 0 receives
 * from rank 1, then from rank 2 (named sources, no MPI_ANY_SOURCE), and
 * replies in that order. Deterministic: no findings. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, i, msg;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "anysource-race-fixed: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (i = 0; i < 2; i++) {
			MPI_Recv(&msg, 1, MPI_INT, i + 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
			if (msg != i + 1) {
				fprintf(stderr, "anysource-race-fixed: rank 0: message from rank %d says %d\n", i + 1, msg);
				MPI_Finalize();
				return 1;
			}
		}
		for (i = 0; i < 2; i++) {
			MPI_Send(&i, 1, MPI_INT, i + 1, 1, MPI_COMM_WORLD); // culprit: reply
		}
		printf("anysource-race-fixed: ok\n");
	} else {
		msg = rank;
		MPI_Send(&msg, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); // culprit: send
		MPI_Recv(&msg, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-reply
		if (msg != rank - 1) {
			fprintf(stderr, "anysource-race-fixed: rank %d: place %d, want %d\n", rank, msg, rank - 1);
			MPI_Finalize();
			return 1;
		}
	}
	MPI_Finalize();
	return 0;
}
