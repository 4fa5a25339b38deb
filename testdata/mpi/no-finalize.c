/* no-finalize (2 ranks): rank 1 has nothing left to do after the exchange
 * and returns from main without MPI_Finalize (MPI-3.1 sec. 8.7: "All
 * processes must call MPI_FINALIZE before exiting"); mpirun then ends the
 * job as exiting improperly (exit 1). The recording names the rank and its
 * last call (an invalid-call), not a rank that "ended without
 * MPI_Finalize (killed?)".
 * argv[1] "exit": rank 1 finds the value it received wrong and gives up with
 *   exit(3), without MPI_Finalize or MPI_Abort: a crash, with its status.
 * Fix: no-finalize-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, v = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "no-finalize: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		v = 41;
		MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send
	} else {
		MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		if (argc > 1 && strcmp(argv[1], "exit") == 0 && v != 42) {
			fprintf(stderr, "no-finalize: rank 1 got %d, want 42: giving up\n", v);
			exit(3);
		}
		return 0;
	}
	MPI_Finalize();
	printf("no-finalize: ok\n");
	return 0;
}
