/* type-struct (2 ranks): a type mismatch through mixed derived datatypes: rank 0 sends 4 elements of a struct {int, double} type, rank 1 receives 4 elements of a struct {double, int} type (the fields swapped). Both have 12 bytes of data per element and the same extent, so the sizes agree; the type signatures ((int, double) x 4 against (double, int) x 4) do not. Open MPI does not compare signatures: the job runs and rank 1 reads an int's bytes as part of a double. Fix: type-struct-fixed. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

struct pair {
	int i;
	double d;
};

struct rpair {
	double d;
	int i;
};

int main(int argc, char **argv)
{
	int rank, size, k, bl[2] = {1, 1};
	struct pair out[4];
	struct rpair in[4];
	MPI_Aint off[2];
	MPI_Datatype types[2], t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "type-struct: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		off[0] = offsetof(struct pair, i);
		off[1] = offsetof(struct pair, d);
		types[0] = MPI_INT;
		types[1] = MPI_DOUBLE;
		MPI_Type_create_struct(2, bl, off, types, &t);
		MPI_Type_commit(&t);
		for (k = 0; k < 4; k++) {
			out[k].i = k;
			out[k].d = k + 0.5;
		}
		MPI_Send(out, 4, t, 1, 0, MPI_COMM_WORLD); // culprit: send
	} else {
		off[0] = offsetof(struct rpair, d);
		off[1] = offsetof(struct rpair, i);
		types[0] = MPI_DOUBLE;
		types[1] = MPI_INT;
		MPI_Type_create_struct(2, bl, off, types, &t);
		MPI_Type_commit(&t);
		MPI_Recv(in, 4, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
	}
	MPI_Type_free(&t);
	if (rank == 1)
		printf("type-struct: ok\n");
	MPI_Finalize();
	return 0;
}
