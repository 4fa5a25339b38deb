/* isend-nowait (2 ranks): requests never completed by the program.
 * argv[1] "leak" (the default): rank 0's MPI_Isend and rank 1's MPI_Irecv of
 * 16 floats are never waited or tested before MPI_Finalize.
 * argv[1] "free": rank 1 frees the request of its 1M-float (4 MiB) Irecv with
 * MPI_Request_free while the receive is still active; rank 0 sends. MPI-3.1
 * sec. 3.7.3 lets a program free an active send, but advises against freeing
 * an active receive: nothing tells it when the buffer holds the message.
 * Both exit 0 under plain mpirun. Fix: isend-nowait-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL 16
#define LARGE (1 << 20)

int main(int argc, char **argv)
{
	int rank, size, i;
	const char *mode = argc > 1 ? argv[1] : "leak";
	float *buf;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || (strcmp(mode, "leak") != 0 && strcmp(mode, "free") != 0)) {
		if (rank == 0)
			fprintf(stderr, "isend-nowait: usage: mpirun -n 2 isend-nowait [leak|free] (got %d ranks, %s)\n", size, mode);
		MPI_Finalize();
		return 2;
	}
	buf = malloc(LARGE * sizeof *buf);
	for (i = 0; i < LARGE; i++)
		buf[i] = (float)i;
	if (strcmp(mode, "leak") == 0) {
		if (rank == 0) {
			MPI_Isend(buf, SMALL, MPI_FLOAT, 1, 0, MPI_COMM_WORLD, &req); // culprit: leak-isend
			printf("isend-nowait: ok, leak\n");
		} else {
			MPI_Irecv(buf, SMALL, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &req); // culprit: leak-irecv
		}
	} else {
		/* The send is posted after the barrier, so the receive is still
		 * active when its request is freed, however the ranks are timed. */
		if (rank == 1) {
			MPI_Irecv(buf, LARGE, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &req); // culprit: free-irecv
			MPI_Request_free(&req); // culprit: free
			MPI_Barrier(MPI_COMM_WORLD);
		} else {
			MPI_Barrier(MPI_COMM_WORLD);
			MPI_Send(buf, LARGE, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // culprit: free-send
			printf("isend-nowait: ok, free\n");
		}
	}
	/* buf is not freed: with the freed request, the transfer may still be writing it */
	MPI_Finalize();
	return 0;
}
