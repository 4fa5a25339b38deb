/* coll-vcounts-fixed (2 ranks): coll-vcounts with counts that agree: what
 * each process sends another is what that one expects from it, including
 * counts of zero, counts that differ by member, and MPI_IN_PLACE (a Gatherv
 * root's, an Allgatherv's, an Alltoallv's: its receive counts are what it
 * sends). Without a mode, every mode in turn. Clean. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* run makes the collective call of mode (2: an unknown mode). */
static int run(const char *mode, int rank)
{
	int sbuf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, rbuf[8] = {0};
	int counts[2], displs[2] = {0, 4}, rcounts[2], rdispls[2] = {0, 4};
	MPI_Request req;

	if (strcmp(mode, "gatherv") == 0) {
		counts[0] = 2, counts[1] = 3;
		MPI_Gatherv(sbuf, rank == 0 ? 2 : 3, MPI_INT, rbuf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
		MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : sbuf, 3, MPI_INT, rbuf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
	} else if (strcmp(mode, "scatterv") == 0) {
		counts[0] = 0, counts[1] = 1;
		MPI_Scatterv(sbuf, counts, displs, MPI_INT, rbuf, rank == 0 ? 0 : 1, MPI_INT, 0, MPI_COMM_WORLD);
	} else if (strcmp(mode, "allgatherv") == 0) {
		counts[0] = 2, counts[1] = 1;
		MPI_Allgatherv(sbuf, rank == 0 ? 2 : 1, MPI_INT, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD);
		MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD);
	} else if (strcmp(mode, "alltoallv") == 0) {
		/* rank 0 sends rank 1 one int, rank 1 sends rank 0 three */
		counts[0] = rank == 0 ? 2 : 3, counts[1] = rank == 0 ? 1 : 2;
		rcounts[0] = rank == 0 ? 2 : 1, rcounts[1] = rank == 0 ? 3 : 2;
		MPI_Alltoallv(sbuf, counts, displs, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
		rcounts[0] = rcounts[1] = 2;
		MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
	} else if (strcmp(mode, "igatherv") == 0) {
		counts[0] = 2, counts[1] = 3;
		MPI_Igatherv(sbuf, rank == 0 ? 2 : 3, MPI_INT, rbuf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "reduce-scatter") == 0) {
		counts[0] = 2, counts[1] = 1;
		MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	} else {
		return 2;
	}
	return 0;
}

static const char *modes[] = {"gatherv", "scatterv", "allgatherv", "alltoallv", "igatherv", "reduce-scatter"};

int main(int argc, char **argv)
{
	int rank, size, i, rc = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || argc > 2) {
		if (rank == 0)
			fprintf(stderr, "usage: coll-vcounts-fixed [MODE] (2 ranks; every mode without one)\n");
		MPI_Finalize();
		return 2;
	}
	if (argc == 2)
		rc = run(argv[1], rank);
	for (i = 0; argc == 1 && i < (int)(sizeof modes / sizeof modes[0]); i++)
		rc = run(modes[i], rank);
	if (rc != 0) {
		if (rank == 0)
			fprintf(stderr, "coll-vcounts-fixed: unknown mode %s\n", argv[1]);
		MPI_Finalize();
		return 2;
	}
	printf("coll-vcounts-fixed: ok, rank %d\n", rank);
	MPI_Finalize();
	return 0;
}
