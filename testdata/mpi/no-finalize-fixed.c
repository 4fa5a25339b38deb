/* no-finalize-fixed (2 ranks): the fix of no-finalize: both ranks call
 * MPI_Finalize before they return, and a rank that gives up calls
 * MPI_Abort (here none does: rank 0 sends the value rank 1 wants).
 * Correct: no findings. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, v = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "no-finalize-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		v = 42;
		MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
	} else {
		MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (v != 42) {
			fprintf(stderr, "no-finalize-fixed: rank 1 got %d, want 42\n", v);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
	}
	MPI_Finalize();
	printf("no-finalize-fixed: ok\n");
	return 0;
}
