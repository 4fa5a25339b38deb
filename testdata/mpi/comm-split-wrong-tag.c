/* comm-split-wrong-tag (4 ranks): like comm-split, but sub-rank 1 receives with tag 1 while sub-rank 0 sent tag 0: world ranks 2 and 3 wait forever in their Recv on the sub-communicator (the small sends completed eagerly). The run hangs. Fix: comm-split. */
#include <mpi.h>
#include <stdio.h>

#define RANKS 4
#define N 16
#define SEND_TAG 0
#define RECV_TAG 1

int main(int argc, char **argv)
{
	int rank, size, color, sub, subsize, i, msg[N];
	MPI_Comm half;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != RANKS) {
		if (rank == 0)
			fprintf(stderr, "comm-split-wrong-tag: needs %d ranks, got %d\n", RANKS, size);
		MPI_Finalize();
		return 2;
	}
	color = rank % 2;
	MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half); // culprit: split
	MPI_Comm_rank(half, &sub);
	MPI_Comm_size(half, &subsize);
	if (subsize != 2 || sub != rank / 2) {
		fprintf(stderr, "comm-split-wrong-tag: rank %d: sub-rank %d of %d\n", rank, sub, subsize);
		MPI_Finalize();
		return 1;
	}
	if (sub == 0) {
		for (i = 0; i < N; i++)
			msg[i] = color * 1000 + rank * 10 + i;
		MPI_Send(msg, N, MPI_INT, 1, SEND_TAG, half); // culprit: send
	} else {
		MPI_Recv(msg, N, MPI_INT, 0, RECV_TAG, half, MPI_STATUS_IGNORE); // culprit: recv
		for (i = 0; i < N; i++) {
			/* the peer is sub-rank 0 of my half: world rank color */
			if (msg[i] != color * 1000 + color * 10 + i) {
				fprintf(stderr, "comm-split-wrong-tag: rank %d: element %d = %d, want %d\n", rank, i, msg[i], color * 1000 + color * 10 + i);
				MPI_Finalize();
				return 1;
			}
		}
		if (rank == 2)
			printf("comm-split-wrong-tag: ok\n");
	}
	MPI_Comm_free(&half);
	MPI_Finalize();
	return 0;
}
