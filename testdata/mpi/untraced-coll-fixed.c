/* untraced-coll-fixed (2 ranks): untraced-coll with every rank in the same
 * collective. neighbor (default): both call MPI_Neighbor_allgather on the
 * Cartesian communicator; intercomm: both call MPI_Intercomm_merge, then
 * MPI_Barrier on the intercommunicator. Clean: calls p2ptrace marks but
 * does not record change nothing of a run that completes. */
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
			fprintf(stderr, "untraced-coll-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	in[0] = rank;
	if (argc > 1 && strcmp(argv[1], "intercomm") == 0) {
		MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &half);
		MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank, 7, &inter);
		MPI_Intercomm_merge(inter, rank, &merged);
		MPI_Barrier(inter);
		MPI_Comm_free(&merged);
		MPI_Comm_free(&inter);
		MPI_Comm_free(&half);
	} else {
		dims[0] = size;
		MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
		MPI_Neighbor_allgather(in, 1, MPI_INT, out, 1, MPI_INT, cart);
		if (out[0] != 1 - rank || out[1] != 1 - rank) {
			fprintf(stderr, "untraced-coll-fixed: rank %d got %d %d\n", rank, out[0], out[1]);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		MPI_Comm_free(&cart);
	}
	if (rank == 0)
		printf("untraced-coll-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
