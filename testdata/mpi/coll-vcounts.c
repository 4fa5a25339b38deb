/* coll-vcounts (2 ranks): the v collectives' counts disagree between
 * members. Each process's send side to a member must have the type
 * signature of that member's receive side from it (MPI-3.1 sec. 5.5
 * Gatherv, 5.6 Scatterv, 5.7 Allgatherv, 5.8 Alltoallv); a Reduce_scatter's
 * recvcounts must be identical on every member (sec. 5.10.1). Each mode
 * has a receiver that expects more than it is sent, which Open MPI
 * accepts without an error (the rest of its buffer is left as it was):
 *   gatherv:        the root expects 3 ints from rank 1, which sends 2;
 *   scatterv:       the root sends rank 1 one int, rank 1 expects 2;
 *   allgatherv:     rank 1 sends 1 int, both expect 2 from it;
 *   alltoallv:      rank 0 sends rank 1 one int, rank 1 expects 2;
 *   igatherv:       gatherv's bug in MPI_Igatherv;
 *   alltoallv-type: rank 0 sends ints, rank 1 receives floats (and sends
 *                   them): the sizes agree, the type signatures do not;
 *   reduce-scatter: rank 1's recvcounts give itself 1 int, rank 0's 2.
 * Without a mode, every mode in turn (seven collective calls, seven findings).
 * The recording's collective-mismatch names the call on both ranks. Plain
 * mpirun passes. Fix: coll-vcounts-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* run makes the collective call of mode (2: an unknown mode). */
static int run(const char *mode, int rank)
{
	int sbuf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, rbuf[8] = {0};
	float fsbuf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, frbuf[8] = {0};
	int counts[2], displs[2] = {0, 4}, rcounts[2], rdispls[2] = {0, 4};
	MPI_Request req;

	if (strcmp(mode, "gatherv") == 0) {
		counts[0] = 2, counts[1] = 3;
		MPI_Gatherv(sbuf, 2, MPI_INT, rbuf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD); // culprit: gatherv
	} else if (strcmp(mode, "scatterv") == 0) {
		counts[0] = 2, counts[1] = 1;
		MPI_Scatterv(sbuf, counts, displs, MPI_INT, rbuf, 2, MPI_INT, 0, MPI_COMM_WORLD); // culprit: scatterv
	} else if (strcmp(mode, "allgatherv") == 0) {
		counts[0] = 2, counts[1] = 2;
		MPI_Allgatherv(sbuf, rank == 0 ? 2 : 1, MPI_INT, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD); // culprit: allgatherv
	} else if (strcmp(mode, "alltoallv") == 0) {
		counts[0] = 2, counts[1] = rank == 0 ? 1 : 2;
		rcounts[0] = rcounts[1] = 2;
		MPI_Alltoallv(sbuf, counts, displs, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD); // culprit: alltoallv
	} else if (strcmp(mode, "alltoallv-type") == 0) {
		counts[0] = counts[1] = rcounts[0] = rcounts[1] = 2;
		if (rank == 0)
			MPI_Alltoallv(sbuf, counts, displs, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD); // culprit: alltoallv-int
		else
			MPI_Alltoallv(fsbuf, counts, displs, MPI_FLOAT, frbuf, rcounts, rdispls, MPI_FLOAT, MPI_COMM_WORLD); // culprit: alltoallv-float
	} else if (strcmp(mode, "igatherv") == 0) {
		counts[0] = 2, counts[1] = 3;
		MPI_Igatherv(sbuf, 2, MPI_INT, rbuf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &req); // culprit: igatherv
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "reduce-scatter") == 0) {
		counts[0] = 2, counts[1] = rank == 0 ? 2 : 1;
		MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // culprit: reduce-scatter
	} else {
		return 2;
	}
	return 0;
}

static const char *modes[] = {"gatherv", "scatterv", "allgatherv", "alltoallv", "alltoallv-type", "igatherv", "reduce-scatter"};

int main(int argc, char **argv)
{
	int rank, size, i, rc = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || argc > 2) {
		if (rank == 0)
			fprintf(stderr, "usage: coll-vcounts [MODE] (2 ranks; every mode without one)\n");
		MPI_Finalize();
		return 2;
	}
	if (argc == 2)
		rc = run(argv[1], rank);
	for (i = 0; argc == 1 && i < (int)(sizeof modes / sizeof modes[0]); i++)
		rc = run(modes[i], rank);
	if (rc != 0) {
		if (rank == 0)
			fprintf(stderr, "coll-vcounts: unknown mode %s\n", argv[1]);
		MPI_Finalize();
		return 2;
	}
	printf("coll-vcounts: ok, rank %d\n", rank);
	MPI_Finalize();
	return 0;
}
