/* collectives (4 ranks): every blocking collective p2ptrace records, each called by every rank in the same order with matching arguments, and its result checked: MPI_Bcast (root 1), MPI_Reduce (root 2), MPI_Allreduce, MPI_Gather, MPI_Gatherv (root 3), MPI_Scatter, MPI_Scatterv (root 1), MPI_Allgather, MPI_Allgatherv, MPI_Alltoall, MPI_Alltoallv, MPI_Reduce_scatter_block, MPI_Reduce_scatter, a ring of MPI_Sendrecv between them, then MPI_Scan and MPI_Exscan and an MPI_Bcast on a communicator of the odd and one of the even ranks (split with the world order reversed) and an MPI_Barrier.
 * Correct: no findings, also under sync (every collective synchronizes). */
#include <mpi.h>
#include <stdio.h>

#define RANKS 4
#define N 2

static int rank;

static int fail(const char *what, int i, int got, int want)
{
	fprintf(stderr, "collectives: rank %d: %s[%d] = %d, want %d\n", rank, what, i, got, want);
	return 1;
}

int main(int argc, char **argv)
{
	int size, i, r, bad = 0, a[N], b[N * RANKS], c[N * RANKS], counts[RANKS], displs[RANKS], rcounts[RANKS], rdispls[RANKS];
	int sub, subrank, x, y, from, to;
	MPI_Comm half;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != RANKS) {
		if (rank == 0)
			fprintf(stderr, "collectives: needs %d ranks, got %d\n", RANKS, size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		a[i] = rank == 1 ? 100 + i : -1;
	MPI_Bcast(a, N, MPI_INT, 1, MPI_COMM_WORLD);
	for (i = 0; i < N; i++)
		if (a[i] != 100 + i)
			bad |= fail("bcast", i, a[i], 100 + i);

	for (i = 0; i < N; i++)
		a[i] = rank * 10 + i;
	MPI_Reduce(a, b, N, MPI_INT, MPI_SUM, 2, MPI_COMM_WORLD);
	for (i = 0; rank == 2 && i < N; i++)
		if (b[i] != 60 + 4 * i)
			bad |= fail("reduce", i, b[i], 60 + 4 * i);
	MPI_Allreduce(a, b, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	for (i = 0; i < N; i++)
		if (b[i] != 30 + i)
			bad |= fail("allreduce", i, b[i], 30 + i);

	/* A ring of Sendrecv: every rank reached the collectives before. */
	to = (rank + 1) % RANKS;
	from = (rank + RANKS - 1) % RANKS;
	MPI_Sendrecv(&rank, 1, MPI_INT, to, 7, &x, 1, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (x != from)
		bad |= fail("sendrecv", 0, x, from);

	MPI_Gather(a, N, MPI_INT, b, N, MPI_INT, 0, MPI_COMM_WORLD);
	for (i = 0; rank == 0 && i < N * RANKS; i++)
		if (b[i] != (i / N) * 10 + i % N)
			bad |= fail("gather", i, b[i], (i / N) * 10 + i % N);
	for (r = 0, i = 0; r < RANKS; r++) {
		counts[r] = r % N + 1;
		displs[r] = i;
		i += counts[r];
	}
	MPI_Gatherv(a, rank % N + 1, MPI_INT, b, counts, displs, MPI_INT, 3, MPI_COMM_WORLD);
	for (r = 0; rank == 3 && r < RANKS; r++)
		for (i = 0; i < counts[r]; i++)
			if (b[displs[r] + i] != r * 10 + i)
				bad |= fail("gatherv", displs[r] + i, b[displs[r] + i], r * 10 + i);

	for (i = 0; i < N * RANKS; i++)
		c[i] = 1000 + i;
	MPI_Scatter(c, N, MPI_INT, a, N, MPI_INT, 0, MPI_COMM_WORLD);
	for (i = 0; i < N; i++)
		if (a[i] != 1000 + rank * N + i)
			bad |= fail("scatter", i, a[i], 1000 + rank * N + i);
	MPI_Scatterv(c, counts, displs, MPI_INT, a, rank % N + 1, MPI_INT, 1, MPI_COMM_WORLD);
	for (i = 0; i < rank % N + 1; i++)
		if (a[i] != 1000 + displs[rank] + i)
			bad |= fail("scatterv", i, a[i], 1000 + displs[rank] + i);

	for (i = 0; i < N; i++)
		a[i] = rank * 10 + i;
	MPI_Allgather(a, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < N * RANKS; i++)
		if (b[i] != (i / N) * 10 + i % N)
			bad |= fail("allgather", i, b[i], (i / N) * 10 + i % N);
	MPI_Allgatherv(a, rank % N + 1, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD);
	for (r = 0; r < RANKS; r++)
		for (i = 0; i < counts[r]; i++)
			if (b[displs[r] + i] != r * 10 + i)
				bad |= fail("allgatherv", displs[r] + i, b[displs[r] + i], r * 10 + i);

	for (i = 0; i < N * RANKS; i++)
		c[i] = rank * 100 + i;
	MPI_Alltoall(c, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < N * RANKS; i++)
		if (b[i] != (i / N) * 100 + rank * N + i % N)
			bad |= fail("alltoall", i, b[i], (i / N) * 100 + rank * N + i % N);
	/* Alltoallv: one int to each rank, at displacement 2 r of both buffers. */
	for (r = 0; r < RANKS; r++) {
		rcounts[r] = 1;
		rdispls[r] = 2 * r;
	}
	MPI_Alltoallv(c, rcounts, rdispls, MPI_INT, b, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
	for (r = 0; r < RANKS; r++)
		if (b[2 * r] != r * 100 + 2 * rank)
			bad |= fail("alltoallv", 2 * r, b[2 * r], r * 100 + 2 * rank);

	for (i = 0; i < N * RANKS; i++)
		c[i] = rank + i;
	MPI_Reduce_scatter_block(c, a, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < N; i++)
		if (a[i] != 6 + 4 * (rank * N + i))
			bad |= fail("reduce_scatter_block", i, a[i], 6 + 4 * (rank * N + i));
	MPI_Reduce_scatter(c, a, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < counts[rank]; i++)
		if (a[i] != 6 + 4 * (displs[rank] + i))
			bad |= fail("reduce_scatter", i, a[i], 6 + 4 * (displs[rank] + i));

	/* Odd and even ranks, each in the reverse of the world's order. */
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, RANKS - rank, &half);
	MPI_Comm_size(half, &sub);
	MPI_Comm_rank(half, &subrank);
	x = rank + 1;
	MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, half);
	/* Comm rank 0 is the higher world rank of the pair. */
	if (y != (subrank == 0 ? x : x + (rank + 2) + 1))
		bad |= fail("scan", 0, y, subrank == 0 ? x : x + (rank + 2) + 1);
	MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, half);
	if (subrank == 1 && y != rank + 3)
		bad |= fail("exscan", 0, y, rank + 3);
	y = rank;
	MPI_Bcast(&y, 1, MPI_INT, 0, half);
	if (y != rank + 2 * subrank)
		bad |= fail("bcast on half", 0, y, rank + 2 * subrank);
	MPI_Comm_free(&half);
	MPI_Barrier(MPI_COMM_WORLD);

	if (rank == 0 && !bad && sub == RANKS / 2)
		printf("collectives: ok\n");
	MPI_Finalize();
	return bad;
}
