/* buffer-overlap (2 ranks): each rank exchanges 4 ints with the other through buffers that overlap, which the MPI standard forbids (the outcome is undefined): sendrecv: MPI_Sendrecv sends buf[0..3] and receives into buf[2..5]; pending: MPI_Irecv into buf[0..3], then MPI_Isend from buf[2..5] while the receive is pending, then MPI_Waitall. Open MPI says nothing; what each rank ends up with depends on the transport. Fix: buffer-overlap-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, peer, buf[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	const char *mode = argc > 1 ? argv[1] : "sendrecv";
	MPI_Request reqs[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "buffer-overlap: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	peer = 1 - rank;
	if (strcmp(mode, "sendrecv") == 0) {
		MPI_Sendrecv(buf, 4, MPI_INT, peer, 0, buf + 2, 4, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: sendrecv
	} else {
		MPI_Irecv(buf, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &reqs[0]); // culprit: irecv
		MPI_Isend(buf + 2, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &reqs[1]); // culprit: isend
		MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
	}
	if (rank == 0)
		printf("buffer-overlap: ok\n");
	MPI_Finalize();
	return 0;
}
