/* pipeline-chunks-fixed (2 ranks): the fix of pipeline-chunks: like it, but after the loop a final MPI_Waitall waits for the last partial group. argv[1]: the number of chunks, 10 by default. Correct for any count: no findings.
 * Rank 1 receives the chunks in order with MPI_Recv and checks them all. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHUNK 16384 /* floats: 64 KiB */

int main(int argc, char **argv)
{
	int rank, size, i, chunks = argc > 1 ? atoi(argv[1]) : 10;
	float *buf;
	MPI_Request reqs[4];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || chunks < 1) {
		if (rank == 0)
			fprintf(stderr, "pipeline-chunks-fixed: usage: mpirun -n 2 pipeline-chunks-fixed [CHUNKS] (got %d ranks, %d chunks)\n", size, chunks);
		MPI_Finalize();
		return 2;
	}
	buf = malloc((size_t)chunks * CHUNK * sizeof *buf);
	for (i = 0; i < 4; i++)
		reqs[i] = MPI_REQUEST_NULL;
	if (rank == 0) {
		for (i = 0; i < chunks * CHUNK; i++)
			buf[i] = (float)i;
		for (i = 0; i < chunks; i++) {
			MPI_Isend(buf + (size_t)i * CHUNK, CHUNK, MPI_FLOAT, 1, i, MPI_COMM_WORLD, &reqs[i % 4]); // culprit: isend
			if (i % 4 == 3) {
				MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE); // culprit: waitall
			}
		}
		if (chunks % 4 != 0) {
			MPI_Waitall(chunks % 4, reqs, MPI_STATUSES_IGNORE); // culprit: waitall-last
		}
		printf("pipeline-chunks-fixed: ok, %d chunks\n", chunks);
	} else {
		for (i = 0; i < chunks; i++) {
			MPI_Recv(buf + (size_t)i * CHUNK, CHUNK, MPI_FLOAT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		}
		for (i = 0; i < chunks * CHUNK; i++) {
			if (buf[i] != (float)i) {
				fprintf(stderr, "pipeline-chunks-fixed: rank 1: element %d = %g, want %d\n", i, buf[i], i);
				MPI_Finalize();
				return 1;
			}
		}
	}
	/* buf is not freed: with unwaited requests, the transfers may still be reading it */
	MPI_Finalize();
	return 0;
}
