/* type-signature-fixed (2 ranks): type-signature with one signature on both ends, through different derived types: rank 0 sends one vector(4 blocks of 2 MPI_INT, stride 3) (8 ints out of a 12-int array), rank 1 receives 4 elements of contiguous(2, MPI_INT): both int x 8. Rank 1 checks what it got. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, i, src[12], got[8];
	MPI_Datatype t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "type-signature-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		MPI_Type_vector(4, 2, 3, MPI_INT, &t);
		MPI_Type_commit(&t);
		for (i = 0; i < 12; i++)
			src[i] = i;
		MPI_Send(src, 1, t, 1, 0, MPI_COMM_WORLD); // culprit: send
	} else {
		MPI_Type_contiguous(2, MPI_INT, &t);
		MPI_Type_commit(&t);
		MPI_Recv(got, 4, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		for (i = 0; i < 8; i++) {
			if (got[i] != (i / 2) * 3 + i % 2) {
				fprintf(stderr, "type-signature-fixed: element %d = %d, want %d\n", i, got[i], (i / 2) * 3 + i % 2);
				MPI_Type_free(&t);
				MPI_Finalize();
				return 1;
			}
		}
	}
	MPI_Type_free(&t);
	if (rank == 1)
		printf("type-signature-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
