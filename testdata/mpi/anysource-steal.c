/* anysource-steal (3 ranks): rank 1 posts an MPI_Irecv from MPI_ANY_SOURCE,
 * then one from rank 0, and waits for both. Ranks 0 and 2 each send it one
 * int, rank 2 0.2 s later. Rank 0's message comes first and the wildcard
 * receive takes it (a message matches the first posted receive that
 * accepts it, MPI-3.1 sec. 3.5): the receive from rank 0 waits for ever,
 * rank 2's message unreceived. Had rank 2's come first, both would have
 * matched: which message the wildcard takes is a race, and it decides the
 * hang. Plain mpirun hangs. p2ptrace: the hang at the MPI_Waitall; check's
 * replay names the wildcard receive and its line as the candidate.
 * Fix: anysource-steal-fixed (the receive from rank 0 posted first). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, a = -1, b = -1;
	double t;
	MPI_Request reqs[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "anysource-steal: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 1) {
		MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &reqs[0]); // culprit: any
		MPI_Irecv(&b, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &reqs[1]);
		MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE); // culprit: wait
		printf("anysource-steal: ok, %d %d\n", a, b);
	} else {
		if (rank == 2)
			for (t = MPI_Wtime(); MPI_Wtime() - t < 0.2;)
				;
		MPI_Send(&rank, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
