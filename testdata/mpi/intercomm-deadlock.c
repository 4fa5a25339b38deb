/* intercomm-deadlock (4 ranks): MPI_COMM_WORLD split by parity into {0,2}
 * and {1,3}, joined by MPI_Intercomm_create. Ranks name peers of the REMOTE
 * group (MPI-3.1 sec. 6.6): world rank 2 (local rank 1 of the even half) and
 * world rank 1 (local rank 0 of the odd half) both MPI_Ssend to each other
 * (remote ranks 0 and 1) before receiving: a deadlock of ranks 1 and 2 at
 * any size. World ranks 0 and 3 exchange in a safe order.
 * Fix: intercomm-deadlock-fixed (the odd rank receives first). */
#include <mpi.h>
#include <stdio.h>

#define RANKS 4
#define N 16

int main(int argc, char **argv)
{
	int rank, size, color, lrank, i, msg[N], got[N];
	MPI_Comm half, inter;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != RANKS) {
		if (rank == 0)
			fprintf(stderr, "intercomm-deadlock: needs %d ranks, got %d\n", RANKS, size);
		MPI_Finalize();
		return 2;
	}
	color = rank % 2;
	MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
	MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 99, &inter);
	MPI_Comm_rank(inter, &lrank);
	for (i = 0; i < N; i++)
		msg[i] = rank * 100 + i;
	if (rank == 2) { /* remote rank 0 of the even half's view: world rank 1 */
		MPI_Ssend(msg, N, MPI_INT, 0, 0, inter); // culprit: ssend-even
		MPI_Recv(got, N, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE);
	} else if (rank == 1) { /* remote rank 1 of the odd half's view: world rank 2 */
		MPI_Ssend(msg, N, MPI_INT, 1, 0, inter); // culprit: ssend-odd
		MPI_Recv(got, N, MPI_INT, 1, 0, inter, MPI_STATUS_IGNORE);
	} else if (rank == 0) { /* remote rank 1: world rank 3 */
		MPI_Ssend(msg, N, MPI_INT, 1, 0, inter);
		MPI_Recv(got, N, MPI_INT, 1, 0, inter, MPI_STATUS_IGNORE);
	} else { /* rank 3, remote rank 0: world rank 0 */
		MPI_Recv(got, N, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE);
		MPI_Ssend(msg, N, MPI_INT, 0, 0, inter);
	}
	for (i = 0; i < N; i++) {
		int peer = rank == 0 ? 3 : rank == 3 ? 0 : 3 - rank;
		if (got[i] != peer * 100 + i) {
			fprintf(stderr, "intercomm-deadlock: rank %d: element %d = %d, want %d\n", rank, i, got[i], peer * 100 + i);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("intercomm-deadlock: ok\n");
	MPI_Comm_free(&inter);
	MPI_Comm_free(&half);
	MPI_Finalize();
	return 0;
}
