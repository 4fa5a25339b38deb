/* split-coll-order-fixed (4 ranks): split-coll-order with every rank calling MPI_Allreduce on MPI_COMM_WORLD and then on its half (rank 2 too). Correct: no findings. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, a = 1, b = 0;
	MPI_Comm half;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 4) {
		if (rank == 0)
			fprintf(stderr, "split-coll-order-fixed: needs 4 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, half);
	MPI_Comm_free(&half);
	if (rank == 0)
		printf("split-coll-order-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
