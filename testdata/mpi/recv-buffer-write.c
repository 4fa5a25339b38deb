/* recv-buffer-write (2 ranks): rank 1 posts a receive of 16 ints from rank 0 and, while it is pending, clears the first element of its buffer (buf[0] = -1), then meets rank 0 at a barrier, after which rank 0 sends. The message lands after the write and overwrites it, so the program happens to work here; but the buffer of a pending receive belongs to the MPI library until the receive completes (MPI standard, 3.7.2): had the message come first, the write would have destroyed it. irecv: MPI_Irecv + MPI_Wait; persistent: MPI_Recv_init + MPI_Start + MPI_Wait. Fix: recv-buffer-write-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, i, ok = 1, buf[N], data[N];
	const char *mode = argc > 1 ? argv[1] : "irecv";
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "recv-buffer-write: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (i = 0; i < N; i++)
			data[i] = i + 1;
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Send(data, N, MPI_INT, 1, 0, MPI_COMM_WORLD);
	} else {
		memset(buf, 0, sizeof buf);
		if (strcmp(mode, "persistent") == 0) {
			MPI_Recv_init(buf, N, MPI_INT, 0, 0, MPI_COMM_WORLD, &req);
			MPI_Start(&req); // culprit: start
		} else {
			MPI_Irecv(buf, N, MPI_INT, 0, 0, MPI_COMM_WORLD, &req); // culprit: irecv
		}
		buf[0] = -1; /* the bug: the receive is pending */
		MPI_Barrier(MPI_COMM_WORLD); // culprit: barrier
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		if (strcmp(mode, "persistent") == 0)
			MPI_Request_free(&req);
		for (i = 0; i < N; i++)
			ok = ok && buf[i] == i + 1;
		if (ok)
			printf("recv-buffer-write: ok\n");
	}
	MPI_Finalize();
	return ok ? 0 : 1;
}
