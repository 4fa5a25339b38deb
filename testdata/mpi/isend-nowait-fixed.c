/* isend-nowait-fixed (2 ranks): the fix of isend-nowait: every request is
 * waited. argv[1] "leak" (the default): rank 0's Isend and rank 1's Irecv of
 * 16 floats are both waited. "free": rank 1 waits for its 1M-float Irecv
 * instead of freeing the request, and checks; rank 0's Isend is waited.
 * "free-matched": rank 1 frees its active 1M-float Irecv's request and rank
 * 0 sends it the message after a barrier: legal (MPI-3.1 sec. 3.7.3: the
 * receive goes on and completes; sec. 8.7: it is matched by a send), though
 * the standard advises against it; rank 1 never reads the buffer.
 * Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL 16
#define LARGE (1 << 20)

int main(int argc, char **argv)
{
	int rank, size, i, n;
	const char *mode = argc > 1 ? argv[1] : "leak";
	float *buf;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || (strcmp(mode, "leak") != 0 && strcmp(mode, "free") != 0 && strcmp(mode, "free-matched") != 0)) {
		if (rank == 0)
			fprintf(stderr, "isend-nowait-fixed: usage: mpirun -n 2 isend-nowait-fixed [leak|free|free-matched] (got %d ranks, %s)\n", size, mode);
		MPI_Finalize();
		return 2;
	}
	n = strcmp(mode, "leak") == 0 ? SMALL : LARGE;
	buf = malloc(n * sizeof *buf);
	if (strcmp(mode, "free-matched") == 0) {
		/* The send is posted after the barrier, so the receive is still
		 * active when its request is freed, however the ranks are timed. */
		if (rank == 1) {
			MPI_Irecv(buf, n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &req);
			MPI_Request_free(&req);
			MPI_Barrier(MPI_COMM_WORLD);
		} else {
			for (i = 0; i < n; i++)
				buf[i] = (float)i;
			MPI_Barrier(MPI_COMM_WORLD);
			MPI_Send(buf, n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
			printf("isend-nowait-fixed: ok, %s\n", mode);
		}
		/* buf is not freed: with the freed request, the transfer may still be writing it */
		MPI_Finalize();
		return 0;
	}
	if (rank == 0) {
		for (i = 0; i < n; i++)
			buf[i] = (float)i;
		MPI_Isend(buf, n, MPI_FLOAT, 1, 0, MPI_COMM_WORLD, &req); // culprit: isend
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait-isend
		printf("isend-nowait-fixed: ok, %s\n", mode);
	} else {
		MPI_Irecv(buf, n, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &req); // culprit: irecv
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait-irecv
		for (i = 0; i < n; i++) {
			if (buf[i] != (float)i) {
				fprintf(stderr, "isend-nowait-fixed: rank 1: element %d = %g, want %d\n", i, buf[i], i);
				MPI_Finalize();
				return 1;
			}
		}
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
