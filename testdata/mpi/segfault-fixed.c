/* segfault-fixed (2 ranks): the fix of segfault: rank 0 allocates the
 * table before it sends from it, and rank 1 keeps what it received in a
 * table of its own. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4

struct table {
	long id, rows;
	int data[N];
};

int main(int argc, char **argv)
{
	int rank, size, i;
	struct table *t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "segfault-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	t = calloc(1, sizeof *t);
	if (!t)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (rank == 0) {
		for (i = 0; i < N; i++)
			t->data[i] = i;
		MPI_Send(t->data, N, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send
	} else {
		MPI_Recv(t->data, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		t->rows = t->data[0];
	}
	free(t);
	MPI_Finalize();
	printf("segfault-fixed: ok\n");
	return 0;
}
