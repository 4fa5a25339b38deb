/* coll-comm-order-fixed (2 ranks): coll-comm-order with the same order on both ranks: MPI_Allreduce (allreduce) or MPI_Bcast (bcast) on MPI_COMM_WORLD, then on its dup. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, a = 1, b = 0;
	const char *mode = argc > 1 ? argv[1] : "allreduce";
	MPI_Comm dup;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "coll-comm-order-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	if (strcmp(mode, "allreduce") == 0) {
		if (rank == 0) {
			MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
			MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, dup);
		} else {
			MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
			MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, dup);
		}
	} else if (strcmp(mode, "bcast") == 0) {
		if (rank == 0) {
			MPI_Bcast(&a, 1, MPI_INT, 0, MPI_COMM_WORLD);
			MPI_Bcast(&a, 1, MPI_INT, 0, dup);
		} else {
			MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
			MPI_Bcast(&b, 1, MPI_INT, 0, dup);
		}
	} else {
		if (rank == 0)
			fprintf(stderr, "coll-comm-order-fixed: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_free(&dup);
	if (rank == 0)
		printf("coll-comm-order-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
