/* coll-comm-order (2 ranks): collectives on two communicators in another order per rank: rank 0 calls MPI_Allreduce on MPI_COMM_WORLD and then on a dup of it, rank 1 on the dup and then on the world. MPI-3.1 sec. 5.13 (Correctness): collectives on overlapping communicators must be called in an order that cannot deadlock, whether they synchronize or not; an Allreduce waits for every member, so each rank waits for the other, which is in the other communicator's call: a deadlock (Open MPI hangs). Before p2ptrace knew that a communicator as large as the world has every rank as a member, rank 1 was said to wait "for a message no rank can send" (a hang). bcast: MPI_Bcast (root 0) instead: the root does not wait, so Open MPI completes; under sync (every collective synchronizes) the same deadlock.
 * Fix: coll-comm-order-fixed (the same order on both ranks). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, a = 1, b = 0;
	const char *mode = argc > 1 ? argv[1] : "allreduce";
	MPI_Comm dup;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "coll-comm-order: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	if (strcmp(mode, "allreduce") == 0) {
		if (rank == 0) {
			MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // culprit: world
			MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, dup);
		} else {
			MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, dup); // culprit: dup
			MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		}
	} else if (strcmp(mode, "bcast") == 0) {
		if (rank == 0) {
			MPI_Bcast(&a, 1, MPI_INT, 0, MPI_COMM_WORLD); // culprit: bcast-world
			MPI_Bcast(&a, 1, MPI_INT, 0, dup);
		} else {
			MPI_Bcast(&b, 1, MPI_INT, 0, dup); // culprit: bcast-dup
			MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
		}
	} else {
		if (rank == 0)
			fprintf(stderr, "coll-comm-order: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_free(&dup);
	if (rank == 0)
		printf("coll-comm-order: ok\n");
	MPI_Finalize();
	return 0;
}
