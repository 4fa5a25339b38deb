/* icollectives (4 ranks): every nonblocking collective (MPI-3.1 sec. 5.12)
 * the shim records, mixed with point-to-point: each round starts a
 * nonblocking collective, exchanges a ring of MPI_Isend/MPI_Irecv while it
 * is in progress, and completes all of them with one MPI_Waitall (or, for
 * the MPI_Ibarrier, an MPI_Test loop); one MPI_Ibcast overlaps a blocking
 * MPI_Allreduce started after it on every rank (the same order of
 * collectives everywhere), and an MPI_Iscan runs on a split communicator in
 * reversed rank order. Results are checked. Clean, also under sync. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4

static int rank, size;

static void fail(const char *what, int i, int got, int want)
{
	fprintf(stderr, "icollectives: rank %d: %s[%d] = %d, want %d\n", rank, what, i, got, want);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ring starts the ring exchange of one round in reqs[1], reqs[2]. */
static void ring(int *out, int *in, MPI_Request *reqs)
{
	*out = rank;
	MPI_Irecv(in, 1, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &reqs[1]);
	MPI_Isend(out, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &reqs[2]);
}

static void ringcheck(int in)
{
	if (in != (rank + size - 1) % size)
		fail("ring", 0, in, (rank + size - 1) % size);
}

int main(int argc, char **argv)
{
	int i, a[N], b[N * 4], c[N * 4], counts[4], displs[4], out, in, sum[N], flag = 0;
	MPI_Request reqs[3];
	MPI_Comm rev;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 4) {
		if (rank == 0)
			fprintf(stderr, "icollectives: needs 4 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < 4; i++) {
		counts[i] = 1;
		displs[i] = i;
	}

	/* Ibarrier, completed by a Test loop. */
	MPI_Ibarrier(MPI_COMM_WORLD, &reqs[0]);
	while (!flag)
		MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE);

	/* Ibcast overlapping a ring and a blocking Allreduce. */
	for (i = 0; i < N; i++)
		a[i] = rank == 0 ? 10 + i : -1;
	MPI_Ibcast(a, N, MPI_INT, 0, MPI_COMM_WORLD, &reqs[0]);
	ring(&out, &in, reqs);
	for (i = 0; i < N; i++)
		b[i] = rank;
	MPI_Allreduce(b, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
	ringcheck(in);
	for (i = 0; i < N; i++) {
		if (a[i] != 10 + i)
			fail("ibcast", i, a[i], 10 + i);
		if (sum[i] != 6)
			fail("allreduce", i, sum[i], 6);
	}

	/* Iallreduce, Ireduce, Iscan, Iexscan, Ireduce_scatter_block. */
	for (i = 0; i < N; i++)
		a[i] = rank + 1;
	MPI_Iallreduce(a, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]);
	ring(&out, &in, reqs);
	MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
	ringcheck(in);
	if (sum[0] != 10)
		fail("iallreduce", 0, sum[0], 10);
	MPI_Ireduce(a, sum, N, MPI_INT, MPI_MAX, 2, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	if (rank == 2 && sum[0] != 4)
		fail("ireduce", 0, sum[0], 4);
	MPI_Iscan(a, sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	if (sum[0] != (rank + 1) * (rank + 2) / 2)
		fail("iscan", 0, sum[0], (rank + 1) * (rank + 2) / 2);
	MPI_Iexscan(a, sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	if (rank > 0 && sum[0] != rank * (rank + 1) / 2)
		fail("iexscan", 0, sum[0], rank * (rank + 1) / 2);
	for (i = 0; i < N; i++)
		b[i] = i;
	MPI_Ireduce_scatter_block(b, sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	if (sum[0] != 4 * rank)
		fail("ireduce_scatter_block", 0, sum[0], 4 * rank);
	MPI_Ireduce_scatter(b, sum, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	if (sum[0] != 4 * rank)
		fail("ireduce_scatter", 0, sum[0], 4 * rank);

	/* Igather(v), Iscatter(v), Iallgather(v), Ialltoall(v). */
	out = rank * 3;
	MPI_Igather(&out, 1, MPI_INT, c, 1, MPI_INT, 1, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	for (i = 0; rank == 1 && i < 4; i++)
		if (c[i] != i * 3)
			fail("igather", i, c[i], i * 3);
	MPI_Igatherv(&out, 1, MPI_INT, c, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	for (i = 0; i < 4; i++)
		b[i] = 100 + i;
	MPI_Iscatter(b, 1, MPI_INT, &in, 1, MPI_INT, 3, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	if (in != 100 + rank)
		fail("iscatter", 0, in, 100 + rank);
	MPI_Iscatterv(b, counts, displs, MPI_INT, &in, 1, MPI_INT, 0, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	MPI_Iallgather(&out, 1, MPI_INT, c, 1, MPI_INT, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	for (i = 0; i < 4; i++)
		if (c[i] != i * 3)
			fail("iallgather", i, c[i], i * 3);
	MPI_Iallgatherv(&out, 1, MPI_INT, c, counts, displs, MPI_INT, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	for (i = 0; i < 4; i++)
		b[i] = rank * 10 + i;
	MPI_Ialltoall(b, 1, MPI_INT, c, 1, MPI_INT, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	for (i = 0; i < 4; i++)
		if (c[i] != i * 10 + rank)
			fail("ialltoall", i, c[i], i * 10 + rank);
	MPI_Ialltoallv(b, counts, displs, MPI_INT, c, counts, displs, MPI_INT, MPI_COMM_WORLD, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);

	/* Iscan on a split communicator in reversed rank order. */
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
	out = 1;
	MPI_Iscan(&out, &in, 1, MPI_INT, MPI_SUM, rev, &reqs[0]);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	if (in != size - rank)
		fail("iscan on rev", 0, in, size - rank);
	MPI_Comm_free(&rev);

	if (rank == 0)
		printf("icollectives: ok\n");
	MPI_Finalize();
	return 0;
}
