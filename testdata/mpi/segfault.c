/* segfault (2 ranks): rank 0 keeps the block it sends in a table it was to
 * allocate, but never did: t is NULL, and MPI_Send's buffer t->data is the
 * address 0x10. The rank dies of SIGSEGV inside MPI_Send (the shim reads
 * the buffer to hash it, as Open MPI would to send it). The recording names
 * the signal, the call and its line; without the shim's signal handler it
 * said only that the rank "ended without MPI_Finalize".
 * argv[1] "own": rank 1 dereferences a NULL table in its own code after its
 *   MPI_Recv: killed in the program's code, after MPI_Recv at its line.
 * argv[1] "after-finalize": rank 1 does so after MPI_Finalize returned: the
 *   rank died all the same, and the trace is crashed, not complete.
 * Fix: segfault-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4

struct table {
	long id, rows;
	int data[N];
};

int main(int argc, char **argv)
{
	int rank, size, i, got[N];
	const char *mode = argc > 1 ? argv[1] : "";
	struct table *t = NULL; /* never allocated */
	volatile struct table *empty = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "segfault: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		if (strcmp(mode, "") == 0) {
			MPI_Send(t->data, N, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send
		} else {
			for (i = 0; i < N; i++)
				got[i] = i;
			MPI_Send(got, N, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send-ok
		}
	} else {
		MPI_Recv(got, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		if (strcmp(mode, "own") == 0)
			empty->rows = got[0];
	}
	MPI_Finalize(); // culprit: finalize
	if (rank == 1 && strcmp(mode, "after-finalize") == 0)
		empty->rows = got[0];
	printf("segfault: ok\n");
	return 0;
}
