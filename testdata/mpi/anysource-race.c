/* anysource-race (3 ranks): ranks 1 and 2 each send their rank to rank 0,
 * which receives from MPI_ANY_SOURCE twice and replies first to whichever
 * sender came first, telling each its place. Correct whatever the order, but
 * the order is a race: check (delay, AnySource alternatives) finds a
 * message-race at the AnySource receive. Fix: anysource-race-fixed. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, i, msg, order[2];
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "anysource-race: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (i = 0; i < 2; i++) {
			MPI_Recv(&msg, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st); // culprit: recv-any
			if (msg != st.MPI_SOURCE) {
				fprintf(stderr, "anysource-race: rank 0: message from rank %d says %d\n", st.MPI_SOURCE, msg);
				MPI_Finalize();
				return 1;
			}
			order[i] = st.MPI_SOURCE;
		}
		for (i = 0; i < 2; i++) {
			MPI_Send(&i, 1, MPI_INT, order[i], 1, MPI_COMM_WORLD); // culprit: reply
		}
		printf("anysource-race: ok, rank %d came first\n", order[0]);
	} else {
		msg = rank;
		MPI_Send(&msg, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); // culprit: send
		MPI_Recv(&msg, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-reply
		if (msg != 0 && msg != 1) {
			fprintf(stderr, "anysource-race: rank %d: place %d\n", rank, msg);
			MPI_Finalize();
			return 1;
		}
	}
	MPI_Finalize();
	return 0;
}
