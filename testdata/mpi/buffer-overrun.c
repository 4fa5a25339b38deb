/* buffer-overrun (2 ranks): calls whose buffer, count elements of the
 * datatype from buf, is larger than the variable buf points into (MPI-3.1
 * sec. 3.2.2: a send buffer is count entries of the datatype from buf; sec.
 * 3.2.4: a receive buffer is the storage of count elements). Each run ends
 * well (but send-stack's) and Open MPI says nothing: only 4 ints arrive into the 8-int
 * receive, and an over-long send only reads past its variable. recv-count:
 * rank 1's MPI_Recv of 8 MPI_INT into int buf[4], in a function of its own
 * (recv_row), rank 0 sending 4; send-type: rank 0's MPI_Send of 2
 * MPI_DOUBLE from int vals[2], received as 2 doubles; reduce-global: every
 * rank's MPI_Reduce of 2 MPI_INT from a global int (into an int[2] at the
 * root); recv-heap: rank 1's MPI_Recv of 8 ints into a block malloc made
 * for 4 (4 arrive); send-stack: rank 0's MPI_Send of 16 Ki ints from an int[16]
 * local of main, which runs past the top of the stack: the library's read
 * kills the rank (SIGSEGV, exit 139), the recording says why; gatherv-displs: the root's MPI_Gatherv into a static int all[3]
 * with displacements 0 and 2 and counts 1 and 2 (it writes all[3], the
 * bytes after the array, which this run does not use); win-base: every
 * rank's MPI_Win_create over the pointer variable (&mem, 8 bytes) with the
 * size of the 4 ints it points to (no access is made); put-origin: rank
 * 0's MPI_Put of 4 ints from an int[2]. p2ptrace: a buffer-overrun naming the call, the variable, its
 * type and size, and how far past its end the buffer runs, from the
 * program's debug info (built with -g). Fix: buffer-overrun-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int partial; /* this rank's share of the total */

static int recv_row(void)
{
	int buf[4] = {0};
	MPI_Status st;
	int n = 0;
	MPI_Recv(buf, 8, MPI_INT, 0, 0, MPI_COMM_WORLD, &st); // culprit: recv
	MPI_Get_count(&st, MPI_INT, &n);
	return n == 4 && buf[3] == 3 ? 0 : 1;
}

int main(int argc, char **argv)
{
	int rank, size, bad = 0;
	const char *mode = argc > 1 ? argv[1] : "recv-count";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "buffer-overrun: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (strcmp(mode, "recv-count") == 0) {
		int row[4] = {0, 1, 2, 3};
		if (rank == 0)
			MPI_Send(row, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
		else
			bad = recv_row();
	} else if (strcmp(mode, "send-type") == 0) {
		int vals[2] = {1, 2};
		double got[2];
		if (rank == 0)
			MPI_Send(vals, 2, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD); // culprit: send
		else
			MPI_Recv(got, 2, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "reduce-global") == 0) {
		int total[2] = {0, 0};
		partial = rank + 1;
		MPI_Reduce(&partial, total, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); // culprit: reduce
		bad = rank == 0 && total[0] != 3;
	} else if (strcmp(mode, "send-stack") == 0) {
		/* 64 KiB from 64 bytes near the top of the stack: past its end */
		int head[16] = {0};
		static int all[1 << 14];
		if (rank == 0)
			MPI_Send(head, 1 << 14, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send-stack
		else
			MPI_Recv(all, 1 << 14, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "recv-heap") == 0) {
		int row[4] = {0, 1, 2, 3}, *got = malloc(4 * sizeof(int));
		if (rank == 0)
			MPI_Send(row, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
		else
			MPI_Recv(got, 8, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-heap
		free(got);
	} else if (strcmp(mode, "win-base") == 0) {
		/* the window's base is the pointer variable, not the memory */
		int *mem = calloc(4, sizeof(int));
		MPI_Win win;
		MPI_Win_create(&mem, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win); // culprit: win-base
		MPI_Win_fence(0, win);
		MPI_Win_fence(0, win);
		MPI_Win_free(&win);
		free(mem);
	} else if (strcmp(mode, "put-origin") == 0) {
		int mem[4] = {0}, row[2] = {rank, rank};
		MPI_Win win;
		MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
		MPI_Win_fence(0, win);
		if (rank == 0)
			MPI_Put(row, 4, MPI_INT, 1, 0, 4, MPI_INT, win); // culprit: put-origin
		MPI_Win_fence(0, win);
		MPI_Win_free(&win);
	} else if (strcmp(mode, "gatherv-displs") == 0) {
		/* rank 1's 2 ints go to all[2] and all[3]: past the end of all[3] */
		int mine[2] = {rank, rank}, counts[2] = {1, 2}, displs[2] = {0, 2};
		static int all[3];
		MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD); // culprit: gatherv
	} else {
		if (rank == 0)
			fprintf(stderr, "buffer-overrun: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	if (bad)
		fprintf(stderr, "buffer-overrun: rank %d: wrong data\n", rank);
	else if (rank == 0)
		printf("buffer-overrun: ok\n");
	MPI_Finalize();
	return bad;
}
