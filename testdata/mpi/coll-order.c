/* coll-order (2 ranks): rank 0 calls MPI_Bcast (root 0) and then sends 16 ints to rank 1; rank 1 receives them and then calls MPI_Bcast. MPI-3.1 sec. 5.13, Correctness (the example after "a correct, portable program must invoke collective communications so that deadlock will not occur, whether collective communications are synchronizing or not"): erroneous, since a Bcast may synchronize; it completes under Open MPI, whose Bcast root does not wait. p2ptrace check: under sync (every collective synchronizes) the Bcast and the Recv deadlock, and the Bcast is unsafe buffering.
 * Fix: coll-order-fixed (rank 1 calls MPI_Bcast before its MPI_Recv). */
#include <mpi.h>
#include <stdio.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, i, a[N], b[N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "coll-order: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		a[i] = rank == 0 ? i * 3 : -1;
	if (rank == 0) {
		MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD); // culprit: bcast
		MPI_Send(a, N, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send
	} else {
		MPI_Recv(b, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD); // culprit: bcast-b
		for (i = 0; i < N; i++) {
			if (a[i] != i * 3 || b[i] != i * 3) {
				fprintf(stderr, "coll-order: rank 1: element %d = %d and %d, want %d\n", i, a[i], b[i], i * 3);
				MPI_Finalize();
				return 1;
			}
		}
		printf("coll-order: ok\n");
	}
	MPI_Finalize();
	return 0;
}
