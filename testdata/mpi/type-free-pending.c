/* type-free-pending (2 ranks): derived datatypes freed while requests that use them are pending, which MPI allows (the library keeps the type until the request completes): rank 0 posts an MPI_Isend of one vector(4 blocks of 1 MPI_INT, stride 2), rank 1 an MPI_Irecv of one contiguous(4, MPI_INT); each frees its type, then waits. Rank 1 checks what it got. Correct: no findings, and the recording must not change what the program does (it exits 0). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, i, src[8], got[4];
	MPI_Datatype t;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "type-free-pending: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		MPI_Type_vector(4, 1, 2, MPI_INT, &t);
		MPI_Type_commit(&t);
		for (i = 0; i < 8; i++)
			src[i] = 10 * i;
		MPI_Isend(src, 1, t, 1, 0, MPI_COMM_WORLD, &req); // culprit: isend
	} else {
		MPI_Type_contiguous(4, MPI_INT, &t);
		MPI_Type_commit(&t);
		MPI_Irecv(got, 1, t, 0, 0, MPI_COMM_WORLD, &req); // culprit: irecv
	}
	MPI_Type_free(&t);
	MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait
	if (rank == 1) {
		for (i = 0; i < 4; i++) {
			if (got[i] != 20 * i) {
				fprintf(stderr, "type-free-pending: element %d = %d, want %d\n", i, got[i], 20 * i);
				MPI_Finalize();
				return 1;
			}
		}
		printf("type-free-pending: ok\n");
	}
	MPI_Finalize();
	return 0;
}
