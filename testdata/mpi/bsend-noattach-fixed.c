/* bsend-noattach-fixed (2 ranks): the fix of bsend-noattach. Rank 0
 * attaches the space its one message needs (MPI_Pack_size +
 * MPI_BSEND_OVERHEAD) before MPI_Bsend and detaches it after, which waits
 * until the message is transmitted. Exit 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

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
			fprintf(stderr, "bsend-noattach-fixed: usage: mpirun -n 2 bsend-noattach-fixed (got %d ranks)\n", size);
		MPI_Finalize();
		return 2;
	}
	for (int i = 0; i < N; i++)
		b[i] = (float)i;
	if (rank == 0) {
		int need, got;
		void *space;
		MPI_Pack_size(N, MPI_FLOAT, MPI_COMM_WORLD, &need);
		need += MPI_BSEND_OVERHEAD;
		space = malloc(need);
		MPI_Buffer_attach(space, need); // culprit: attach
		MPI_Bsend(b, N, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // culprit: bsend
		MPI_Buffer_detach(&space, &got); // culprit: detach
		free(space);
	} else {
		MPI_Recv(b, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (b[N - 1] != (float)(N - 1)) {
			fprintf(stderr, "bsend-noattach-fixed: rank 1 got %g\n", b[N - 1]);
			MPI_Finalize();
			return 1;
		}
		printf("bsend-noattach-fixed: ok\n");
	}
	MPI_Finalize();
	return 0;
}
