/* icoll-buffers (2 ranks): a nonblocking collective's buffers belong to MPI
 * until its request completes (MPI-3.1 sec. 5.12: "the user must not ...
 * modify ... buffers ... until the operation completes"), as a nonblocking
 * send's and receive's do (sec. 3.7.2). Each mode writes one while the
 * collective is pending:
 *   bcast:     the root writes its MPI_Ibcast buffer (the send side) before
 *              MPI_Wait: in-flight-mutation on rank 0;
 *   allreduce: rank 1 writes its MPI_Iallreduce receive buffer before
 *              MPI_Wait: recv-buffer-write on rank 1;
 *   gather:    the root writes its MPI_Igather receive buffer before
 *              MPI_Wait: recv-buffer-write on rank 0;
 *   allgatherv: rank 0 writes its MPI_Iallgatherv receive buffer before
 *              MPI_Wait: recv-buffer-write on rank 0 (a v collective's
 *              buffers reach as far as its counts and displacements).
 * Plain mpirun passes: the values are not checked (what the program gets is
 * undefined, not an error Open MPI reports). Fix: icoll-buffers-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, i;
	int buf[N], in[N], out[2 * N];
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || argc != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: icoll-buffers bcast|allreduce|gather|allgatherv (2 ranks)\n");
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		buf[i] = in[i] = rank * N + i;
	memset(out, 0, sizeof out);
	if (strcmp(argv[1], "bcast") == 0) {
		MPI_Ibcast(buf, N, MPI_INT, 0, MPI_COMM_WORLD, &req); // culprit: ibcast
		if (rank == 0)
			buf[0] = -1; // culprit: write-bcast
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait-bcast
	} else if (strcmp(argv[1], "allreduce") == 0) {
		MPI_Iallreduce(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req); // culprit: iallreduce
		if (rank == 1)
			out[0] = -1; // culprit: write-allreduce
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait-allreduce
	} else if (strcmp(argv[1], "gather") == 0) {
		MPI_Igather(in, N, MPI_INT, out, N, MPI_INT, 0, MPI_COMM_WORLD, &req); // culprit: igather
		if (rank == 0)
			out[N] = -1; // culprit: write-gather
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait-gather
	} else if (strcmp(argv[1], "allgatherv") == 0) {
		int counts[2] = {N / 2, N / 2}, displs[2] = {0, N};
		MPI_Iallgatherv(in, N / 2, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD, &req); // culprit: iallgatherv
		if (rank == 0)
			out[1] = -1; // culprit: write-allgatherv
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait-allgatherv
	} else {
		if (rank == 0)
			fprintf(stderr, "icoll-buffers: unknown mode %s\n", argv[1]);
		MPI_Finalize();
		return 2;
	}
	printf("icoll-buffers: ok, rank %d: %d %d\n", rank, buf[0], out[0]);
	MPI_Finalize();
	return 0;
}
