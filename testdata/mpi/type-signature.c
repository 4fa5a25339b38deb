/* type-signature (2 ranks): a type mismatch through derived datatypes: rank 0 sends 4 elements of contiguous(2, MPI_INT) (8 ints, 32 bytes), rank 1 receives 2 elements of contiguous(2, MPI_DOUBLE) (4 doubles, 32 bytes): the sizes agree, the type signatures (int x 8, double x 4) do not. Open MPI does not check signatures: the job runs and rank 1 gets the ints' bytes as doubles. Fix: type-signature-fixed. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, i, ints[8];
	double dbl[4];
	MPI_Datatype t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "type-signature: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		MPI_Type_contiguous(2, MPI_INT, &t);
		MPI_Type_commit(&t);
		for (i = 0; i < 8; i++)
			ints[i] = i;
		MPI_Send(ints, 4, t, 1, 0, MPI_COMM_WORLD); // culprit: send
	} else {
		MPI_Type_contiguous(2, MPI_DOUBLE, &t);
		MPI_Type_commit(&t);
		MPI_Recv(dbl, 2, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
	}
	MPI_Type_free(&t);
	if (rank == 1)
		printf("type-signature: ok\n");
	MPI_Finalize();
	return 0;
}
