/* recv-buffer-write-fixed (2 ranks): recv-buffer-write done right, and the case a buffer check must not take for a write of the program: rank 1 posts two receives from rank 0 (16 ints, and 1 MiB, past the eager limit), then both ranks call MPI_Comm_create (a collective), a call p2ptrace does not record, during which Open MPI delivers both messages into the pending buffers; rank 1 touches its buffers only after MPI_Waitall. irecv: MPI_Irecv; persistent: MPI_Recv_init + MPI_Startall. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 16
#define L (256 * 1024)

int main(int argc, char **argv)
{
	int rank, size, i, ok = 1, small[N], *large = calloc(L, sizeof(int));
	const char *mode = argc > 1 ? argv[1] : "irecv";
	MPI_Request reqs[2];
	MPI_Group world;
	MPI_Comm all;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || !large) {
		if (rank == 0)
			fprintf(stderr, "recv-buffer-write-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	if (rank == 0) {
		for (i = 0; i < N; i++)
			small[i] = i + 1;
		for (i = 0; i < L; i++)
			large[i] = i;
		MPI_Isend(small, N, MPI_INT, 1, 0, MPI_COMM_WORLD, &reqs[0]);
		MPI_Isend(large, L, MPI_INT, 1, 1, MPI_COMM_WORLD, &reqs[1]);
		MPI_Comm_create(MPI_COMM_WORLD, world, &all);
		MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
	} else {
		memset(small, 0, sizeof small);
		if (strcmp(mode, "persistent") == 0) {
			MPI_Recv_init(small, N, MPI_INT, 0, 0, MPI_COMM_WORLD, &reqs[0]);
			MPI_Recv_init(large, L, MPI_INT, 0, 1, MPI_COMM_WORLD, &reqs[1]);
			MPI_Startall(2, reqs);
		} else {
			MPI_Irecv(small, N, MPI_INT, 0, 0, MPI_COMM_WORLD, &reqs[0]);
			MPI_Irecv(large, L, MPI_INT, 0, 1, MPI_COMM_WORLD, &reqs[1]);
		}
		MPI_Comm_create(MPI_COMM_WORLD, world, &all);
		MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
		for (i = 0; i < N; i++)
			ok = ok && small[i] == i + 1;
		for (i = 0; i < L; i++)
			ok = ok && large[i] == i;
		small[0] = -1; /* after the receive completed: the program's own */
		if (strcmp(mode, "persistent") == 0) {
			MPI_Request_free(&reqs[0]);
			MPI_Request_free(&reqs[1]);
		}
		if (ok)
			printf("recv-buffer-write-fixed: ok\n");
	}
	MPI_Comm_free(&all);
	MPI_Group_free(&world);
	free(large);
	MPI_Finalize();
	return ok ? 0 : 1;
}
