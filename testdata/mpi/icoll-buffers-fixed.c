/* icoll-buffers-fixed (2 ranks): icoll-buffers with each write after the
 * MPI_Wait that completes the collective, and reads of the send buffers
 * while it is pending (allowed: MPI-3.1 sec. 5.12 forbids modifying a
 * pending collective's buffers, and accessing its receive buffers). Also an
 * MPI_IN_PLACE MPI_Iallreduce, whose one buffer is written by MPI. Without
 * a mode, all three in turn. Clean. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, i, sum = 0, all, known = 0;
	int buf[N], in[N], out[2 * N];
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || argc > 2) {
		if (rank == 0)
			fprintf(stderr, "usage: icoll-buffers-fixed [bcast|allreduce|gather] (2 ranks; all three without one)\n");
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		buf[i] = in[i] = rank * N + i;
	memset(out, 0, sizeof out);
	all = argc == 1;
	if (all || strcmp(argv[1], "bcast") == 0) {
		known = 1;
		MPI_Ibcast(buf, N, MPI_INT, 0, MPI_COMM_WORLD, &req);
		if (rank == 0)
			sum = buf[0]; /* reading a send buffer is allowed */
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		if (rank == 0)
			buf[0] = -1;
	}
	if (all || strcmp(argv[1], "allreduce") == 0) {
		known = 1;
		MPI_Iallreduce(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
		sum = in[1];
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		out[0] = -1;
		MPI_Iallreduce(MPI_IN_PLACE, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	}
	if (all || strcmp(argv[1], "gather") == 0) {
		known = 1;
		MPI_Igather(in, N, MPI_INT, out, N, MPI_INT, 0, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		if (rank == 0)
			out[N] = -1;
	}
	if (all || strcmp(argv[1], "allgatherv") == 0) {
		int counts[2] = {N / 2, N / 2}, displs[2] = {0, N};
		known = 1;
		MPI_Iallgatherv(in, N / 2, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD, &req);
		sum = in[0]; /* reading a send buffer is allowed */
		out[N - 1] = -1; /* between the members' blocks ([0, N/2) and [N, 3N/2)): not the collective's */
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		out[N + 1] = -1;
	}
	if (!known) {
		if (rank == 0)
			fprintf(stderr, "icoll-buffers-fixed: unknown mode %s\n", argv[1]);
		MPI_Finalize();
		return 2;
	}
	printf("icoll-buffers-fixed: ok, rank %d: %d %d %d\n", rank, buf[0], out[0], sum);
	MPI_Finalize();
	return 0;
}
