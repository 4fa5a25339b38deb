/* bsend-overflow-fixed (2 ranks): the fix of bsend-overflow. Rank 0
 * attaches the space both messages need while in flight together, twice
 * (MPI_Pack_size + MPI_BSEND_OVERHEAD): every MPI_Bsend fits. Exit 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size;
	float b[N], c[N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "bsend-overflow-fixed: usage: mpirun -n 2 bsend-overflow-fixed (got %d ranks)\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (int i = 0; i < N; i++)
		b[i] = (float)i;
	if (rank == 0) {
		int need, got, rc;
		void *space;
		MPI_Pack_size(N, MPI_FLOAT, MPI_COMM_WORLD, &need);
		need = 2 * (need + MPI_BSEND_OVERHEAD);
		space = malloc(need);
		MPI_Buffer_attach(space, need); // culprit: attach
		MPI_Bsend(b, N, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
		rc = MPI_Bsend(b, N, MPI_FLOAT, 1, 1, MPI_COMM_WORLD); // culprit: bsend
		if (rc != MPI_SUCCESS)
			MPI_Send(b, N, MPI_FLOAT, 1, 1, MPI_COMM_WORLD); /* the MPI refused it: rank 1 still waits for it */
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Buffer_detach(&space, &got);
		free(space);
		printf("bsend-overflow-fixed: ok (second MPI_Bsend %s)\n", rc == MPI_SUCCESS ? "accepted" : "refused");
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Recv(c, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(c, N, MPI_FLOAT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (c[N - 1] != (float)(N - 1)) {
			fprintf(stderr, "bsend-overflow-fixed: rank 1 got %g\n", c[N - 1]);
			MPI_Finalize();
			return 1;
		}
	}
	MPI_Finalize();
	return 0;
}
