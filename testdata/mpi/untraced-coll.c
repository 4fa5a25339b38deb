/* untraced-coll (2 ranks): collective calls p2ptrace marks but does not
 * record (the trace has no op for them). neighbor (default): on a periodic
 * 1-D Cartesian communicator rank 0 calls MPI_Neighbor_allgather where rank 1
 * calls MPI_Barrier (MPI-3.1 sec. 7.6: every process of the topology calls
 * the neighbourhood collective): Open MPI hangs. intercomm: the two ranks
 * make an intercommunicator (MPI_Intercomm_create) and rank 0 calls
 * MPI_Barrier on it where rank 1 calls MPI_Intercomm_merge: Open MPI hangs.
 * p2ptrace: a hang naming both calls and lines (the recording used to run
 * until killed: it saw rank 0 in no MPI call).
 * Fix: untraced-coll-fixed (both call the same collective). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, dims[1], periods[1] = {1}, in[1], out[2];
	MPI_Comm cart, half, inter, merged;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "untraced-coll: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	in[0] = rank;
	if (argc > 1 && strcmp(argv[1], "intercomm") == 0) {
		MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &half);
		MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank, 7, &inter);
		if (rank == 0) {
			MPI_Barrier(inter); // culprit: inter-barrier
		} else {
			MPI_Intercomm_merge(inter, 1, &merged); // culprit: merge
			MPI_Comm_free(&merged);
		}
		MPI_Comm_free(&inter);
		MPI_Comm_free(&half);
	} else {
		dims[0] = size;
		MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
		if (rank == 0)
			MPI_Neighbor_allgather(in, 1, MPI_INT, out, 1, MPI_INT, cart); // culprit: neighbor
		else
			MPI_Barrier(cart); // culprit: barrier
		MPI_Comm_free(&cart);
	}
	if (rank == 0)
		printf("untraced-coll: ok\n");
	MPI_Finalize();
	return 0;
}
