/* resource-leak-fixed (2 ranks): resource-leak's objects, each freed before
 * MPI_Finalize (MPI_Comm_free, MPI_Win_free): no findings. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, i, buf[4] = {0}, sum = 0;
	MPI_Comm dup[3], half, again;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "resource-leak-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < 3; i++)
		MPI_Comm_dup(MPI_COMM_WORLD, &dup[i]);
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &half);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
	MPI_Comm_free(&half);
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &again);
	MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	MPI_Win_fence(0, win);
	MPI_Win_free(&win);
	MPI_Comm_free(&again);
	for (i = 0; i < 3; i++)
		MPI_Comm_free(&dup[i]);
	if (rank == 0)
		printf("resource-leak-fixed: %s\n", sum == 1 ? "ok" : "wrong sum");
	MPI_Finalize();
	return sum == 1 ? 0 : 1;
}
