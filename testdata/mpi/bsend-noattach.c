/* bsend-noattach (2 ranks): a buffered send with no buffer attached. Rank 0
 * sends with MPI_Bsend but never calls MPI_Buffer_attach: a buffered send
 * with insufficient attached space is erroneous (MPI-3.1 sec. 3.6), and no
 * space at all is insufficient for any message. Exit 0 under plain mpirun
 * (Open MPI 4.1.4 lets it through). Fix: bsend-noattach-fixed. */
#include <mpi.h>
#include <stdio.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size;
	float b[N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "bsend-noattach: usage: mpirun -n 2 bsend-noattach (got %d ranks)\n", size);
		MPI_Finalize();
		return 2;
	}
	for (int i = 0; i < N; i++)
		b[i] = (float)i;
	if (rank == 0) {
		MPI_Bsend(b, N, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // culprit: bsend
	} else {
		MPI_Recv(b, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (b[N - 1] != (float)(N - 1)) {
			fprintf(stderr, "bsend-noattach: rank 1 got %g\n", b[N - 1]);
			MPI_Finalize();
			return 1;
		}
		printf("bsend-noattach: ok\n");
	}
	MPI_Finalize();
	return 0;
}
