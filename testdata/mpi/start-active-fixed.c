/* start-active-fixed (2 ranks): the fix of start-active: rank 0 completes every start before the next: start: MPI_Wait after each MPI_Start; startall: MPI_Waitall on both requests after each MPI_Startall. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 4
#define ITERS 3

int main(int argc, char **argv)
{
	int rank, size, it, i, t;
	int sbuf[2][N], rbuf[N];
	const char *mode = argc > 1 ? argv[1] : "start";
	int all = strcmp(mode, "startall") == 0;
	MPI_Request reqs[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "start-active-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (!all && strcmp(mode, "start") != 0) {
		if (rank == 0)
			fprintf(stderr, "start-active-fixed: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		MPI_Send_init(sbuf[0], N, MPI_INT, 1, 0, MPI_COMM_WORLD, &reqs[0]); // culprit: init
		if (all)
			MPI_Send_init(sbuf[1], N, MPI_INT, 1, 1, MPI_COMM_WORLD, &reqs[1]); // culprit: init-1
		for (it = 0; it < ITERS; it++) {
			for (t = 0; t < 1 + all; t++)
				for (i = 0; i < N; i++)
					sbuf[t][i] = it * 100 + t * 10 + i;
			if (all) {
				MPI_Startall(2, reqs); // culprit: startall
				MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE); // culprit: wait
			} else {
				MPI_Start(&reqs[0]); // culprit: start
				MPI_Wait(&reqs[0], MPI_STATUS_IGNORE); // culprit: wait
			}
		}
		MPI_Request_free(&reqs[0]);
		if (all)
			MPI_Request_free(&reqs[1]);
	} else {
		for (it = 0; it < ITERS; it++) {
			for (t = 0; t < 1 + all; t++) {
				MPI_Recv(rbuf, N, MPI_INT, 0, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
				for (i = 0; i < N; i++) {
					if (rbuf[i] != it * 100 + t * 10 + i) {
						fprintf(stderr, "start-active-fixed: iteration %d tag %d element %d = %d, want %d\n", it, t, i, rbuf[i], it * 100 + t * 10 + i);
						MPI_Finalize();
						return 1;
					}
				}
			}
		}
		printf("start-active-fixed: ok\n");
	}
	MPI_Finalize();
	return 0;
}
