/* buffer-overlap-fixed (2 ranks): buffer-overlap with a send buffer and a receive buffer of their own (sendrecv: MPI_Sendrecv; pending: MPI_Irecv, MPI_Isend, MPI_Waitall), and a check of what each rank got. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, peer, i, sbuf[4], rbuf[4];
	const char *mode = argc > 1 ? argv[1] : "sendrecv";
	MPI_Request reqs[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "buffer-overlap-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	peer = 1 - rank;
	for (i = 0; i < 4; i++)
		sbuf[i] = 10 * rank + i;
	if (strcmp(mode, "sendrecv") == 0) {
		MPI_Sendrecv(sbuf, 4, MPI_INT, peer, 0, rbuf, 4, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: sendrecv
	} else {
		MPI_Irecv(rbuf, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &reqs[0]); // culprit: irecv
		MPI_Isend(sbuf, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &reqs[1]); // culprit: isend
		MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
	}
	for (i = 0; i < 4; i++) {
		if (rbuf[i] != 10 * peer + i) {
			fprintf(stderr, "buffer-overlap-fixed: rank %d: element %d = %d, want %d\n", rank, i, rbuf[i], 10 * peer + i);
			MPI_Finalize();
			return 1;
		}
	}
	if (rank == 0)
		printf("buffer-overlap-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
