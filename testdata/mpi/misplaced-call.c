/* misplaced-call (2 ranks): an MPI call outside MPI_Init..MPI_Finalize
 * (MPI-3.1 sec. 8.7: before MPI_Init only MPI_Get_version,
 * MPI_Get_library_version, MPI_Initialized, MPI_Finalized and the MPI_T
 * functions may be called, and after MPI_Finalize no more). Open MPI aborts
 * the process in the call ("called before MPI_INIT was invoked"); mpirun
 * exits 1. before-init: rank 1, which reads its rank from the launcher's
 * environment before MPI_Init (as programs that pick a device do), asks
 * MPI_Comm_rank first; after-finalize: rank 1 sends a last message after
 * MPI_Finalize. The recording names the call and its line as an
 * invalid-call (before, it recorded nothing, or a complete run).
 * Fix: misplaced-call-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *env = getenv("OMPI_COMM_WORLD_RANK");
	const char *mode = argc > 1 ? argv[1] : "before-init";
	int rank = env ? atoi(env) : 0, size, v = 7;

	if (strcmp(mode, "before-init") == 0 && rank == 1)
		MPI_Comm_rank(MPI_COMM_WORLD, &rank); // culprit: before-init
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "misplaced-call: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	if (strcmp(mode, "after-finalize") == 0 && rank == 1)
		MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); // culprit: after-finalize
	if (rank == 0)
		printf("misplaced-call: ok\n");
	return 0;
}
