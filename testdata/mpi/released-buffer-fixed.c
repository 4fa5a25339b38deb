/* released-buffer-fixed (2 ranks): released-buffer with the send buffers kept alive until their requests complete. frame: the function that posts the send waits for it before it returns; freed: the heap block is freed after the Wait. Clean. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 16

static void send_and_wait(void)
{
	int data[N], i;
	MPI_Request req;

	for (i = 0; i < N; i++)
		data[i] = i + 1;
	MPI_Isend(data, N, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE); /* the fix: before data is gone */
}

int main(int argc, char **argv)
{
	int rank, size, i, ok = 1, buf[N];
	const char *mode = argc > 1 ? argv[1] : "frame";
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "released-buffer-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		if (strcmp(mode, "freed") == 0) {
			int *data = malloc(N * sizeof *data);
			for (i = 0; i < N; i++)
				data[i] = i + 1;
			MPI_Isend(data, N, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
			free(data); /* the fix: after the Wait */
		} else {
			send_and_wait();
		}
	} else {
		MPI_Recv(buf, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (i = 0; i < N; i++)
			ok = ok && buf[i] == i + 1;
		if (ok)
			printf("released-buffer-fixed: ok\n");
	}
	MPI_Finalize();
	return ok ? 0 : 1;
}
