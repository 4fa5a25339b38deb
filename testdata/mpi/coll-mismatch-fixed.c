/* coll-mismatch-fixed (2 ranks): coll-mismatch with both ranks calling MPI_Reduce (root 0); rank 0 checks the sums. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>

#define N 4

int main(int argc, char **argv)
{
	int rank, size, i, a[N], b[N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "coll-mismatch-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		a[i] = rank + i;
	MPI_Reduce(a, b, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		for (i = 0; i < N; i++) {
			if (b[i] != 2 * i + 1) {
				fprintf(stderr, "coll-mismatch-fixed: element %d = %d, want %d\n", i, b[i], 2 * i + 1);
				MPI_Finalize();
				return 1;
			}
		}
		printf("coll-mismatch-fixed: ok\n");
	}
	MPI_Finalize();
	return 0;
}
