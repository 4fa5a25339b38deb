/* pipeline-chunks (2 ranks): rank 0 sends 64 KiB chunks (16384 floats) to rank 1 with MPI_Isend into requests[i%4], tag i, and calls MPI_Waitall on the 4 requests after every 4th chunk. argv[1]: the number of chunks, 10 by default: the last partial group (chunks 8 and 9) is never waited (missing-wait, twice); with a multiple of 4 (8) every request is waited and the program is correct. Fix for any count: pipeline-chunks-fixed.
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
			fprintf(stderr, "pipeline-chunks: usage: mpirun -n 2 pipeline-chunks [CHUNKS] (got %d ranks, %d chunks)\n", size, chunks);
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
		/* bug: a partial last group is left unwaited */
		printf("pipeline-chunks: ok, %d chunks\n", chunks);
	} else {
		for (i = 0; i < chunks; i++) {
			MPI_Recv(buf + (size_t)i * CHUNK, CHUNK, MPI_FLOAT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		}
		for (i = 0; i < chunks * CHUNK; i++) {
			if (buf[i] != (float)i) {
				fprintf(stderr, "pipeline-chunks: rank 1: element %d = %g, want %d\n", i, buf[i], i);
				MPI_Finalize();
				return 1;
			}
		}
	}
	/* buf is not freed: with unwaited requests, the transfers may still be reading it */
	MPI_Finalize();
	return 0;
}
