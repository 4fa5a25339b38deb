/* anysource-steal-fixed (3 ranks): anysource-steal with the receive from
 * rank 0 posted before the one from MPI_ANY_SOURCE: rank 0's message
 * matches it (the first posted receive that accepts it, MPI-3.1 sec. 3.5),
 * and the wildcard takes rank 2's, whichever comes first. */
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
			fprintf(stderr, "anysource-steal-fixed: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 1) {
		MPI_Irecv(&b, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &reqs[1]);
		MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &reqs[0]);
		MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
		printf("anysource-steal-fixed: ok, %d %d\n", a, b);
	} else {
		if (rank == 2)
			for (t = MPI_Wtime(); MPI_Wtime() - t < 0.2;)
				;
		MPI_Send(&rank, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
