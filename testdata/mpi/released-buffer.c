/* released-buffer (2 ranks): rank 0 sends 16 ints to rank 1 with MPI_Isend and releases the send buffer before its MPI_Wait. frame: the buffer is a local of the function that posts the send, which returns the request to its caller, and the caller waits; freed: the buffer is a heap block that the program frees between the Isend and the Wait. The buffer of a pending send belongs to the MPI library until the request completes (MPI standard, 3.7.2): a library that sends from it later (a message past its eager limit, or one it has not copied) reads memory that now holds something else. The program happens to work here: the message is small and Open MPI copies it at the Isend. Fix: released-buffer-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 16

static MPI_Request post_send(void)
{
	int data[N], i;
	MPI_Request req;

	for (i = 0; i < N; i++)
		data[i] = i + 1;
	MPI_Isend(data, N, MPI_INT, 1, 0, MPI_COMM_WORLD, &req); // culprit: frame-isend
	return req; /* the bug (frame): data is gone, the send is pending */
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
			fprintf(stderr, "released-buffer: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		if (strcmp(mode, "freed") == 0) {
			int *data = malloc(N * sizeof *data);
			for (i = 0; i < N; i++)
				data[i] = i + 1;
			MPI_Isend(data, N, MPI_INT, 1, 0, MPI_COMM_WORLD, &req); // culprit: freed-isend
			free(data); /* the bug (freed): the send is pending */ // culprit: free
			MPI_Wait(&req, MPI_STATUS_IGNORE);
		} else {
			req = post_send();
			MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait
		}
	} else {
		MPI_Recv(buf, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (i = 0; i < N; i++)
			ok = ok && buf[i] == i + 1;
		if (ok)
			printf("released-buffer: ok\n");
	}
	MPI_Finalize();
	return ok ? 0 : 1;
}
