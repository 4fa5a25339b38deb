/* invalid-rank-fixed (2 ranks; works with any number >= 2): the fix of invalid-rank: the loop stops at dst < size. Correct: no findings.
 * Every rank but 0 receives its 16 floats, checks them and acknowledges. */
#include <mpi.h>
#include <stdio.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, dst, i, ack;
	float buf[N];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		fprintf(stderr, "invalid-rank-fixed: needs at least 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (dst = 1; dst < size; dst++) {
			for (i = 0; i < N; i++)
				buf[i] = (float)(dst * 100 + i);
			MPI_Send(buf, N, MPI_FLOAT, dst, 0, MPI_COMM_WORLD); // culprit: send
			MPI_Recv(&ack, 1, MPI_INT, dst, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-ack
			if (ack != dst) {
				fprintf(stderr, "invalid-rank-fixed: rank 0: ack %d from rank %d\n", ack, dst);
				MPI_Finalize();
				return 1;
			}
		}
		printf("invalid-rank-fixed: ok\n");
	} else {
		MPI_Recv(buf, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		for (i = 0; i < N; i++) {
			if (buf[i] != (float)(rank * 100 + i)) {
				fprintf(stderr, "invalid-rank-fixed: rank %d: element %d = %g, want %d\n", rank, i, buf[i], rank * 100 + i);
				MPI_Finalize();
				return 1;
			}
		}
		ack = rank;
		MPI_Send(&ack, 1, MPI_INT, 0, 1, MPI_COMM_WORLD); // culprit: send-ack
	}
	MPI_Finalize();
	return 0;
}
