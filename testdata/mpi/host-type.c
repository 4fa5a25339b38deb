/* host-type (2 ranks): calls whose predefined datatype does not name the C
 * type of the variable their buffer holds (MPI-3.1 sec. 3.3.1: "the type
 * of each variable in the sender's buffer [must] match the type specified
 * for that entry in the send operation"; so for a receive). The sizes
 * agree, so nothing overruns and Open MPI says nothing; the values are
 * reinterpreted. unsigned-int: every rank's MPI_Reduce of an int as
 * MPI_UNSIGNED (a sum that may be negative); float-int: rank 0's MPI_Send
 * of an int[2] as 2 MPI_FLOAT, received as floats. p2ptrace: a
 * host-type-mismatch naming the call, the variable and both types, from
 * the program's debug info (built with -g). Fix: host-type-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size;
	const char *mode = argc > 1 ? argv[1] : "unsigned-int";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "host-type: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (strcmp(mode, "unsigned-int") == 0) {
		int delta = rank == 0 ? -3 : 1, total = 0;
		MPI_Reduce(&delta, &total, 1, MPI_UNSIGNED, MPI_SUM, 0, MPI_COMM_WORLD); // culprit: reduce
	} else if (strcmp(mode, "float-int") == 0) {
		int vals[2] = {1, 2};
		float got[2];
		if (rank == 0)
			MPI_Send(vals, 2, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // culprit: send
		else
			MPI_Recv(got, 2, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		if (rank == 0)
			fprintf(stderr, "host-type: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0)
		printf("host-type: ok\n");
	MPI_Finalize();
	return 0;
}
