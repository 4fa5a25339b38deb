/* coll-mismatch-fixed (2 ranks): coll-mismatch with both ranks calling MPI_Reduce (root 0), then MPI_Bcast (root 0) of 4 ints on both; rank 0 checks the sums, rank 1 the broadcast values. Correct: no findings. */
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
	MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
	for (i = 0; i < N; i++) {
		if (a[i] != i) {
			fprintf(stderr, "coll-mismatch-fixed: rank %d: broadcast element %d = %d, want %d\n", rank, i, a[i], i);
			MPI_Finalize();
			return 1;
		}
	}
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
