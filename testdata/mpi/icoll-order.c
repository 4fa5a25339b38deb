/* icoll-order (2 ranks): rank 0 starts an MPI_Ibcast (root 0) and then
 * calls MPI_Barrier; rank 1 calls MPI_Barrier and then starts its
 * MPI_Ibcast; both wait for the Ibcast's request. MPI-3.1 sec. 5.12: "all
 * processes must call collective operations (blocking and nonblocking) in
 * the same order per communicator": the first collective of the world is
 * an Ibcast on rank 0 and a Barrier on rank 1, erroneous. Open MPI runs it
 * (its nonblocking collectives have their own tags, so its Barriers meet),
 * so only the order of the calls shows it: p2ptrace reports a
 * collective-mismatch of the Ibcast and the Barrier.
 * Fix: icoll-order-fixed (rank 1 starts its Ibcast before its Barrier). */
#include <mpi.h>
#include <stdio.h>

#define N 8

int main(int argc, char **argv)
{
	int rank, size, i, a[N];
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "icoll-order: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		a[i] = rank == 0 ? i * 5 : -1;
	if (rank == 0) {
		MPI_Ibcast(a, N, MPI_INT, 0, MPI_COMM_WORLD, &req); // culprit: ibcast
		MPI_Barrier(MPI_COMM_WORLD); // culprit: barrier
	} else {
		MPI_Barrier(MPI_COMM_WORLD); // culprit: barrier-b
		MPI_Ibcast(a, N, MPI_INT, 0, MPI_COMM_WORLD, &req); // culprit: ibcast-b
	}
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	for (i = 0; i < N; i++) {
		if (a[i] != i * 5) {
			fprintf(stderr, "icoll-order: rank %d: element %d = %d, want %d\n", rank, i, a[i], i * 5);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("icoll-order: ok\n");
	MPI_Finalize();
	return 0;
}
