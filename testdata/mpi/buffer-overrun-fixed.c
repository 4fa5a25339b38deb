/* buffer-overrun-fixed (2 ranks): buffer-overrun with counts and
 * datatypes the variables hold: recv-count: MPI_Recv of 4 MPI_INT into int
 * buf[4]; send-type: 2 MPI_INT from int vals[2], received as 2 ints;
 * reduce-global: MPI_Reduce of 2 MPI_INT from a global int[2];
 * send-stack: 16 ints from an int[16]; gatherv-displs: MPI_Gatherv into
 * int all[4]; recv-heap: 8 ints into a block of 8; win-base: MPI_Win_create over the memory (mem); put-origin:
 * MPI_Put of 4 ints from an int[4]. Besides,
 * calls whose buffer lies inside a larger variable and ends at its end (a
 * row of a matrix, the second half of an array) are not overruns. Correct:
 * no findings. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int partial[2]; /* this rank's shares of the totals */

static int recv_row(void)
{
	int buf[4] = {0};
	MPI_Status st;
	int n = 0;
	MPI_Recv(buf, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, &st); // culprit: recv
	MPI_Get_count(&st, MPI_INT, &n);
	return n == 4 && buf[3] == 3 ? 0 : 1;
}

int main(int argc, char **argv)
{
	int rank, size, bad = 0;
	const char *mode = argc > 1 ? argv[1] : "recv-count";
	int m[3][2] = {{0, 1}, {2, 3}, {4, 5}}, half[4] = {0};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "buffer-overrun-fixed: needs 2 ranks, got %d\n", size);
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
		int vals[2] = {1, 2}, got[2];
		if (rank == 0)
			MPI_Send(vals, 2, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send
		else
			MPI_Recv(got, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "reduce-global") == 0) {
		int total[2] = {0, 0};
		partial[0] = partial[1] = rank + 1;
		MPI_Reduce(partial, total, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); // culprit: reduce
		bad = rank == 0 && total[1] != 3;
	} else if (strcmp(mode, "send-stack") == 0) {
		int head[16] = {0}, all[16];
		if (rank == 0)
			MPI_Send(head, 16, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send-stack
		else
			MPI_Recv(all, 16, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "recv-heap") == 0) {
		int row[4] = {0, 1, 2, 3}, *got = malloc(8 * sizeof(int));
		if (rank == 0)
			MPI_Send(row, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
		else
			MPI_Recv(got, 8, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-heap
		free(got);
	} else if (strcmp(mode, "win-base") == 0) {
		int *mem = calloc(4, sizeof(int));
		MPI_Win win;
		MPI_Win_create(mem, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win); // culprit: win-base
		MPI_Win_fence(0, win);
		MPI_Win_fence(0, win);
		MPI_Win_free(&win);
		free(mem);
	} else if (strcmp(mode, "put-origin") == 0) {
		int mem[4] = {0}, row[4] = {rank, rank, rank, rank};
		MPI_Win win;
		MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
		MPI_Win_fence(0, win);
		if (rank == 0)
			MPI_Put(row, 4, MPI_INT, 1, 0, 4, MPI_INT, win); // culprit: put-origin
		MPI_Win_fence(0, win);
		MPI_Win_free(&win);
	} else if (strcmp(mode, "gatherv-displs") == 0) {
		int mine[2] = {rank, rank}, counts[2] = {1, 2}, displs[2] = {0, 2}, all[4] = {0};
		MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD); // culprit: gatherv
		bad = rank == 0 && all[3] != 1;
	} else {
		if (rank == 0)
			fprintf(stderr, "buffer-overrun-fixed: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	/* the last row of m, and the second half of half: inside, to the end */
	MPI_Sendrecv(m[2], 2, MPI_INT, 1 - rank, 1, half + 2, 2, MPI_INT, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (half[3] != 5)
		bad = 1;
	if (bad)
		fprintf(stderr, "buffer-overrun-fixed: rank %d: wrong data\n", rank);
	else if (rank == 0)
		printf("buffer-overrun-fixed: ok\n");
	MPI_Finalize();
	return bad;
}
