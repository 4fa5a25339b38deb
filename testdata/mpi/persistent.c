/* persistent (2 ranks): persistent requests, as iterative solvers use them:
 * each rank sets up MPI_Recv_init from and MPI_Send_init to its peer once
 * (16384 floats, 64 KiB, above the eager limit), then for 10 iterations
 * refills its send buffer, starts both with MPI_Startall, completes them with
 * MPI_Waitall and checks what it got; finally frees both requests.
 * Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 16384
#define ITERS 10

int main(int argc, char **argv)
{
	int rank, size, peer, it, i;
	float *sbuf, *rbuf;
	MPI_Request reqs[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "persistent: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	peer = 1 - rank;
	sbuf = malloc(N * sizeof *sbuf);
	rbuf = malloc(N * sizeof *rbuf);
	MPI_Recv_init(rbuf, N, MPI_FLOAT, peer, 7, MPI_COMM_WORLD, &reqs[0]); // culprit: recv-init
	MPI_Send_init(sbuf, N, MPI_FLOAT, peer, 7, MPI_COMM_WORLD, &reqs[1]); // culprit: send-init
	for (it = 0; it < ITERS; it++) {
		for (i = 0; i < N; i++)
			sbuf[i] = (float)(rank * 1000 + it * 10 + i % 10);
		MPI_Startall(2, reqs); // culprit: startall
		MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE); // culprit: waitall
		for (i = 0; i < N; i++) {
			if (rbuf[i] != (float)(peer * 1000 + it * 10 + i % 10)) {
				fprintf(stderr, "persistent: rank %d iteration %d: element %d = %g, want %d\n", rank, it, i, rbuf[i], peer * 1000 + it * 10 + i % 10);
				MPI_Finalize();
				return 1;
			}
		}
	}
	MPI_Request_free(&reqs[0]); // culprit: free-recv
	MPI_Request_free(&reqs[1]); // culprit: free-send
	if (rank == 0)
		printf("persistent: ok, %d iterations\n", ITERS);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
