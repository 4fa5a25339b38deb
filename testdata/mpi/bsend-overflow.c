/* bsend-overflow (2 ranks): two buffered messages in flight, space for one.
 * Rank 0 attaches the space one message needs (MPI_Pack_size +
 * MPI_BSEND_OVERHEAD) and makes two MPI_Bsends; rank 1 receives only after
 * a barrier rank 0 enters after both, so the first message still holds its
 * space when the second is sent: insufficient space, erroneous (MPI-3.1
 * sec. 3.6). MPI_ERRORS_RETURN keeps the job going whatever the MPI
 * answers; both messages are still received. Fix: bsend-overflow-fixed. */
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
			fprintf(stderr, "bsend-overflow: usage: mpirun -n 2 bsend-overflow (got %d ranks)\n", size);
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
		need += MPI_BSEND_OVERHEAD;
		space = malloc(need);
		MPI_Buffer_attach(space, need); // culprit: attach
		MPI_Bsend(b, N, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
		rc = MPI_Bsend(b, N, MPI_FLOAT, 1, 1, MPI_COMM_WORLD); // culprit: bsend
		if (rc != MPI_SUCCESS)
			MPI_Send(b, N, MPI_FLOAT, 1, 1, MPI_COMM_WORLD); /* the MPI refused it: rank 1 still waits for it */
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Buffer_detach(&space, &got);
		free(space);
		printf("bsend-overflow: ok (second MPI_Bsend %s)\n", rc == MPI_SUCCESS ? "accepted" : "refused");
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Recv(c, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(c, N, MPI_FLOAT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (c[N - 1] != (float)(N - 1)) {
			fprintf(stderr, "bsend-overflow: rank 1 got %g\n", c[N - 1]);
			MPI_Finalize();
			return 1;
		}
	}
	MPI_Finalize();
	return 0;
}
