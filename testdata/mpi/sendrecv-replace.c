/* sendrecv-replace (4 ranks): a ring shift with MPI_Sendrecv_replace: each
 * rank starts with a buffer of its own values (65536 floats, 256 KiB) and
 * for size iterations sends it to the next rank and receives the previous
 * rank's into the same buffer, checking the owner's values each time; after
 * size shifts every rank holds its own buffer again. Works with any number
 * of ranks >= 2; the scenario runs 4. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 65536

int main(int argc, char **argv)
{
	int rank, size, next, prev, it, i, owner;
	float *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "sendrecv-replace: needs at least 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	next = (rank + 1) % size;
	prev = (rank - 1 + size) % size;
	buf = malloc(N * sizeof *buf);
	for (i = 0; i < N; i++)
		buf[i] = (float)(rank * 1000 + i % 100);
	for (it = 1; it <= size; it++) {
		MPI_Sendrecv_replace(buf, N, MPI_FLOAT, next, it, prev, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: sendrecv-replace
		owner = ((rank - it) % size + size) % size;
		for (i = 0; i < N; i++) {
			if (buf[i] != (float)(owner * 1000 + i % 100)) {
				fprintf(stderr, "sendrecv-replace: rank %d shift %d: element %d = %g, want %d\n", rank, it, i, buf[i], owner * 1000 + i % 100);
				MPI_Finalize();
				return 1;
			}
		}
	}
	if (rank == 0)
		printf("sendrecv-replace: ok, %d shifts\n", size);
	free(buf);
	MPI_Finalize();
	return 0;
}
