/* start-active (2 ranks): MPI_Start of a persistent request that is still active (MPI-3.1 sec. 3.9: "It is erroneous to call MPI_START with a request that is active"). Rank 0 streams ITERS messages of 4 ints to rank 1 through persistent sends set up once, and forgets to complete them: start: one MPI_Send_init request, started each iteration with MPI_Start and never waited, so the second iteration starts it while it is active; startall: two requests (tags 0 and 1), started together with MPI_Startall each iteration, of which only the first is waited, so the second MPI_Startall names the active second one. Rank 1 receives every message with MPI_Recv and checks it. Open MPI does not check the rule (its ob1 starts a new request and drops the active one): under plain mpirun the job completes and exits 0. Fix: start-active-fixed. */
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
			fprintf(stderr, "start-active: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (!all && strcmp(mode, "start") != 0) {
		if (rank == 0)
			fprintf(stderr, "start-active: unknown mode %s\n", mode);
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
				MPI_Wait(&reqs[0], MPI_STATUS_IGNORE); // culprit: wait
			} else {
				MPI_Start(&reqs[0]); // culprit: start
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
						fprintf(stderr, "start-active: iteration %d tag %d element %d = %d, want %d\n", it, t, i, rbuf[i], it * 100 + t * 10 + i);
						MPI_Finalize();
						return 1;
					}
				}
			}
		}
		printf("start-active: ok\n");
	}
	MPI_Finalize();
	return 0;
}
