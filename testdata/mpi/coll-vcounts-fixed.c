/* coll-vcounts-fixed (2 ranks): coll-vcounts with counts that agree: what
 * each process sends another is what that one expects from it, including
 * counts of zero, counts that differ by member, and MPI_IN_PLACE (a Gatherv
 * root's, an Allgatherv's, an Alltoallv's: its receive counts are what it
 * sends). Clean. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size;
	int sbuf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, rbuf[8] = {0};
	int counts[2], displs[2] = {0, 4}, rcounts[2], rdispls[2] = {0, 4};
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || argc != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: coll-vcounts-fixed MODE (2 ranks)\n");
		MPI_Finalize();
		return 2;
	}
	if (strcmp(argv[1], "gatherv") == 0) {
		counts[0] = 2, counts[1] = 3;
		MPI_Gatherv(sbuf, rank == 0 ? 2 : 3, MPI_INT, rbuf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
		MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : sbuf, 3, MPI_INT, rbuf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
	} else if (strcmp(argv[1], "scatterv") == 0) {
		counts[0] = 0, counts[1] = 1;
		MPI_Scatterv(sbuf, counts, displs, MPI_INT, rbuf, rank == 0 ? 0 : 1, MPI_INT, 0, MPI_COMM_WORLD);
	} else if (strcmp(argv[1], "allgatherv") == 0) {
		counts[0] = 2, counts[1] = 1;
		MPI_Allgatherv(sbuf, rank == 0 ? 2 : 1, MPI_INT, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD);
		MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD);
	} else if (strcmp(argv[1], "alltoallv") == 0) {
		/* rank 0 sends rank 1 one int, rank 1 sends rank 0 three */
		counts[0] = rank == 0 ? 2 : 3, counts[1] = rank == 0 ? 1 : 2;
		rcounts[0] = rank == 0 ? 2 : 1, rcounts[1] = rank == 0 ? 3 : 2;
		MPI_Alltoallv(sbuf, counts, displs, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
		rcounts[0] = rcounts[1] = 2;
		MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
	} else if (strcmp(argv[1], "igatherv") == 0) {
		counts[0] = 2, counts[1] = 3;
		MPI_Igatherv(sbuf, rank == 0 ? 2 : 3, MPI_INT, rbuf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	} else if (strcmp(argv[1], "reduce-scatter") == 0) {
		counts[0] = 2, counts[1] = 1;
		MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	} else {
		if (rank == 0)
			fprintf(stderr, "coll-vcounts-fixed: unknown mode %s\n", argv[1]);
		MPI_Finalize();
		return 2;
	}
	printf("coll-vcounts-fixed: ok, rank %d: %d %d\n", rank, rbuf[0], rbuf[4]);
	MPI_Finalize();
	return 0;
}
