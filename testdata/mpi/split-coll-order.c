/* split-coll-order (4 ranks): MPI_Comm_split into the even and the odd ranks; every rank calls MPI_Allreduce on MPI_COMM_WORLD and then on its half, but rank 2 on its half first. MPI-3.1 sec. 5.13 (Correctness): collectives on overlapping communicators must be called in an order that cannot deadlock. Rank 0 waits in the world's Allreduce for rank 2, which waits in the even half's Allreduce for rank 0: a deadlock (ranks 1 and 3 wait in the world's for rank 2). Open MPI hangs. The recording notes each communicator's members (the shim's comm records, the trace header's comms), so the wait-for graph knows rank 0 is a member of the even half before it uses it: before, rank 2 was said to wait "for a message no rank can send" (a hang).
 * Fix: split-coll-order-fixed (rank 2 calls the world's Allreduce first too). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, a = 1, b = 0;
	MPI_Comm half;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 4) {
		if (rank == 0)
			fprintf(stderr, "split-coll-order: needs 4 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	if (rank == 2) {
		MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, half); // culprit: half-first
		MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	} else {
		MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // culprit: world-first
		MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, half);
	}
	MPI_Comm_free(&half);
	if (rank == 0)
		printf("split-coll-order: ok\n");
	MPI_Finalize();
	return 0;
}
