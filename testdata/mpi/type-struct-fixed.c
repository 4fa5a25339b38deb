/* type-struct-fixed (2 ranks): type-struct done right: rank 0 sends 4 elements of a struct {int, double} type; rank 1 receives one element of contiguous(4, struct {int, double}), built from its own struct type: another datatype, one type signature ((int, double) x 4), so the message matches and rank 1 checks the values. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

struct pair {
	int i;
	double d;
};

int main(int argc, char **argv)
{
	int rank, size, k, ok = 1, bl[2] = {1, 1};
	struct pair buf[4];
	MPI_Aint off[2] = {offsetof(struct pair, i), offsetof(struct pair, d)};
	MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, t, four;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "type-struct-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Type_create_struct(2, bl, off, types, &t);
	MPI_Type_commit(&t);
	if (rank == 0) {
		for (k = 0; k < 4; k++) {
			buf[k].i = k;
			buf[k].d = k + 0.5;
		}
		MPI_Send(buf, 4, t, 1, 0, MPI_COMM_WORLD); // culprit: send
	} else {
		MPI_Type_contiguous(4, t, &four);
		MPI_Type_commit(&four);
		MPI_Recv(buf, 1, four, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		MPI_Type_free(&four);
		for (k = 0; k < 4; k++)
			ok = ok && buf[k].i == k && buf[k].d == k + 0.5;
		if (ok)
			printf("type-struct-fixed: ok\n");
	}
	MPI_Type_free(&t);
	MPI_Finalize();
	return ok ? 0 : 1;
}
