/* ready-send (2 ranks): rank 0 sends 16 floats with MPI_Rsend as soon as it
 * starts; rank 1 posts the matching MPI_Irecv as soon as it starts, and
 * nothing tells rank 0 that it did. MPI-3.1 sec. 3.4: a send in ready mode
 * may be started only if the matching receive is already posted; here
 * only the timing decides (the receive is usually posted first: Open MPI
 * runs it, and treats a ready send as a standard one anyway). p2ptrace:
 * ready-without-recv at the Rsend, every run, from the run's
 * synchronization rather than its timing (recorder/mpi readyFindings).
 * Fix: ready-send-fixed (rank 1 posts, then a barrier, then rank 0's
 * Rsend). */
#include <mpi.h>
#include <stdio.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, i;
	float buf[N];
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "ready-send: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (i = 0; i < N; i++)
			buf[i] = (float)i;
		MPI_Rsend(buf, N, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // culprit: rsend
	} else {
		MPI_Irecv(buf, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		for (i = 0; i < N; i++) {
			if (buf[i] != (float)i) {
				fprintf(stderr, "ready-send: rank 1: element %d = %g\n", i, buf[i]);
				MPI_Finalize();
				return 1;
			}
		}
		printf("ready-send: ok\n");
	}
	MPI_Finalize();
	return 0;
}
