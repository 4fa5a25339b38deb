/* coll-mismatch (2 ranks): the first collective call of the world differs between the ranks (MPI-3.1 sec. 5.1: erroneous). kind (default): rank 0 calls MPI_Reduce (root 0) where rank 1 calls MPI_Bcast (root 0); Open MPI 4.1.4 hangs (each rank waits for the other's part of its own collective). size: both call MPI_Bcast (root 0), rank 0 with 4 ints, rank 1 with 2 (the standard wants equal type signatures); Open MPI fails rank 1 with MPI_ERR_TRUNCATE (exit 15). dtype: both call MPI_Bcast (root 0) of 4 elements, rank 0 of MPI_INT, rank 1 of MPI_FLOAT: the same 16 bytes, but not the same type signature (MPI-3.1 sec. 5.4); Open MPI completes (rank 1 reads ints as floats). op: both call MPI_Allreduce of 4 ints, rank 0 with MPI_SUM, rank 1 with MPI_MAX (sec. 5.9.1: the same op on all processes); Open MPI completes, each rank with a different result. allgather: every rank calls MPI_Allgather sending 2 ints and receiving 4 from each rank: the ranks agree, but what each sends is not what each receives from it (sec. 5.7: the type signatures of sendcount, sendtype and recvcount, recvtype are equal); Open MPI completes, leaving half of each block unset. alltoall: MPI_Alltoall, rank 0 sending and receiving 4 ints to and from each rank, rank 1 2 (each rank's own block agrees, so rank 1's error needs rank 0's message: both are in the call when it comes); Open MPI fails rank 1 with MPI_ERR_TRUNCATE (exit 15). p2ptrace: a collective-mismatch naming both calls.
 * Fix: coll-mismatch-fixed (both ranks call MPI_Reduce, or MPI_Bcast of 4 ints, MPI_Allreduce with MPI_SUM). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 4

int main(int argc, char **argv)
{
	int rank, size, i, a[N], b[N], all[2 * N], r2[2 * N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "coll-mismatch: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		a[i] = rank + i;
	for (i = 0; i < 2 * N; i++)
		all[i] = rank * 2 * N + i;
	if (argc > 1 && strcmp(argv[1], "size") == 0)
		MPI_Bcast(a, rank == 0 ? N : N / 2, MPI_INT, 0, MPI_COMM_WORLD); // culprit: bcast-size
	else if (argc > 1 && strcmp(argv[1], "dtype") == 0)
		MPI_Bcast(a, N, rank == 0 ? MPI_INT : MPI_FLOAT, 0, MPI_COMM_WORLD); // culprit: bcast-dtype
	else if (argc > 1 && strcmp(argv[1], "allgather") == 0)
		MPI_Allgather(a, N / 2, MPI_INT, all, N, MPI_INT, MPI_COMM_WORLD); // culprit: allgather
	else if (argc > 1 && strcmp(argv[1], "alltoall") == 0)
		MPI_Alltoall(all, rank == 0 ? N : N / 2, MPI_INT, r2, rank == 0 ? N : N / 2, MPI_INT, MPI_COMM_WORLD); // culprit: alltoall
	else if (argc > 1 && strcmp(argv[1], "op") == 0)
		MPI_Allreduce(a, b, N, MPI_INT, rank == 0 ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD); // culprit: allreduce-op
	else if (rank == 0)
		MPI_Reduce(a, b, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); // culprit: reduce
	else
		MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD); // culprit: bcast
	if (rank == 0)
		printf("coll-mismatch: ok\n");
	MPI_Finalize();
	return 0;
}
