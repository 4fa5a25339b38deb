/* misplaced-call-fixed (2 ranks): misplaced-call with every call between
 * MPI_Init and MPI_Finalize: before-init asks MPI_Comm_rank after
 * MPI_Init; after-finalize sends its last message (received) before
 * MPI_Finalize. MPI_Initialized and MPI_Finalized, which may be called
 * before MPI_Init and after MPI_Finalize, are. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "before-init";
	int rank, size, v = 7, flag = 1;

	MPI_Initialized(&flag);
	if (flag) {
		fprintf(stderr, "misplaced-call-fixed: initialized before MPI_Init\n");
		return 1;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank); // culprit: before-init
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "misplaced-call-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (strcmp(mode, "after-finalize") == 0) {
		if (rank == 1)
			MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); // culprit: after-finalize
		else
			MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Finalize();
	MPI_Finalized(&flag);
	if (rank == 0 && flag)
		printf("misplaced-call-fixed: ok\n");
	return 0;
}
