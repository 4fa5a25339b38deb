/* matrix-scatter (4 ranks): rank 0 fills a 1024x1024 float matrix and sends
 * rows 256k..256k+255 (a 1 MiB block) to rank k for k = 1..3 with MPI_Send;
 * each receiver checks the count and every element of its block.
 * Correct: no findings, 3 transfers of 1 MiB. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define DIM 1024
#define ROWS 256
#define RANKS 4

static float value(int row, int col) { return (float)(row * 3 + col % 13); }

int main(int argc, char **argv)
{
	int rank, size, i, k, count;
	float *m, *block;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != RANKS) {
		if (rank == 0)
			fprintf(stderr, "matrix-scatter: needs %d ranks, got %d\n", RANKS, size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		m = malloc((size_t)DIM * DIM * sizeof *m);
		for (i = 0; i < DIM * DIM; i++)
			m[i] = value(i / DIM, i % DIM);
		for (k = 1; k < RANKS; k++) {
			MPI_Send(m + (size_t)k * ROWS * DIM, ROWS * DIM, MPI_FLOAT, k, 0, MPI_COMM_WORLD); // culprit: send
		}
		free(m);
		printf("matrix-scatter: ok, %d blocks of 1 MiB\n", RANKS - 1);
	} else {
		block = malloc((size_t)ROWS * DIM * sizeof *block);
		MPI_Recv(block, ROWS * DIM, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &st); // culprit: recv
		MPI_Get_count(&st, MPI_FLOAT, &count);
		if (count != ROWS * DIM) {
			fprintf(stderr, "matrix-scatter: rank %d: received %d floats, want %d\n", rank, count, ROWS * DIM);
			MPI_Finalize();
			return 1;
		}
		for (i = 0; i < ROWS * DIM; i++) {
			if (block[i] != value(rank * ROWS + i / DIM, i % DIM)) {
				fprintf(stderr, "matrix-scatter: rank %d: element %d = %g, want %g\n", rank, i, block[i], value(rank * ROWS + i / DIM, i % DIM));
				MPI_Finalize();
				return 1;
			}
		}
		free(block);
	}
	MPI_Finalize();
	return 0;
}
