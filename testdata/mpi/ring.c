/* ring (4 ranks): every iteration each rank posts MPI_Isend of its buffer to
 * the next rank and MPI_Irecv from the previous one (tag = iteration), waits
 * for both with MPI_Waitall and checks what it got. 10 iterations; argv[1]:
 * "small" (256 floats, 1 KiB, the default) or "large" (1M floats, 4 MiB).
 * Works with any number of ranks >= 2; the scenario runs 4.
 * Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 10

int main(int argc, char **argv)
{
	int rank, size, next, prev, it, i, n;
	const char *arg = argc > 1 ? argv[1] : "small";
	float *sbuf, *rbuf;
	MPI_Request reqs[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	n = strcmp(arg, "small") == 0 ? 256 : strcmp(arg, "large") == 0 ? 1 << 20 : -1;
	if (size < 2 || n < 0) {
		if (rank == 0)
			fprintf(stderr, "ring: usage: mpirun -n RANKS ring [small|large] (got %d ranks, %s)\n", size, arg);
		MPI_Finalize();
		return 2;
	}
	next = (rank + 1) % size;
	prev = (rank - 1 + size) % size;
	sbuf = malloc(n * sizeof *sbuf);
	rbuf = malloc(n * sizeof *rbuf);
	for (it = 0; it < ITERS; it++) {
		for (i = 0; i < n; i++)
			sbuf[i] = (float)(rank * 1000 + it * 10 + i % 10);
		MPI_Isend(sbuf, n, MPI_FLOAT, next, it, MPI_COMM_WORLD, &reqs[0]); // culprit: isend
		MPI_Irecv(rbuf, n, MPI_FLOAT, prev, it, MPI_COMM_WORLD, &reqs[1]); // culprit: irecv
		MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE); // culprit: waitall
		for (i = 0; i < n; i++) {
			if (rbuf[i] != (float)(prev * 1000 + it * 10 + i % 10)) {
				fprintf(stderr, "ring: rank %d iteration %d: element %d = %g, want %d\n", rank, it, i, rbuf[i], prev * 1000 + it * 10 + i % 10);
				MPI_Finalize();
				return 1;
			}
		}
	}
	if (rank == 0)
		printf("ring: ok, %d ranks, %d iterations of %d bytes\n", size, ITERS, n * 4);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
