/* recv-recv-fixed (2 ranks): the fix of recv-recv: each rank pre-posts its
 * receive with MPI_Irecv, then sends, then waits for the receive.
 * Correct at any size: no findings. */
#include <mpi.h>
#include <stdio.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, peer, i;
	float sbuf[N], rbuf[N];
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "recv-recv-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	peer = 1 - rank;
	for (i = 0; i < N; i++)
		sbuf[i] = (float)(rank * 100 + i);
	MPI_Irecv(rbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, &req); // culprit: irecv
	MPI_Send(sbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD); // culprit: send
	MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait
	for (i = 0; i < N; i++) {
		if (rbuf[i] != (float)(peer * 100 + i)) {
			fprintf(stderr, "recv-recv-fixed: rank %d: element %d = %g, want %d\n", rank, i, rbuf[i], peer * 100 + i);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("recv-recv-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
