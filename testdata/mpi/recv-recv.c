/* recv-recv (2 ranks): both ranks first wait in a blocking MPI_Recv for the
 * other's message, then would send: a real deadlock at any size (no buffering
 * can save it). The run hangs. Fix: recv-recv-fixed. */
#include <mpi.h>
#include <stdio.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, peer, i;
	float sbuf[N], rbuf[N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "recv-recv: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	peer = 1 - rank;
	for (i = 0; i < N; i++)
		sbuf[i] = (float)(rank * 100 + i);
	if (rank == 0) {
		MPI_Recv(rbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-a
	} else {
		MPI_Recv(rbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-b
	}
	MPI_Send(sbuf, N, MPI_FLOAT, peer, 0, MPI_COMM_WORLD); // culprit: send
	for (i = 0; i < N; i++) {
		if (rbuf[i] != (float)(peer * 100 + i)) {
			fprintf(stderr, "recv-recv: rank %d: element %d = %g, want %d\n", rank, i, rbuf[i], peer * 100 + i);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("recv-recv: ok\n");
	MPI_Finalize();
	return 0;
}
