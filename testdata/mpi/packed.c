/* packed (2 ranks): MPI_PACKED at either end of a message. Rank 0 packs 4
 * ints with MPI_Pack and sends them as MPI_PACKED; rank 1 receives them as 4
 * MPI_INT. Then rank 1 sends 4 MPI_INT and rank 0 receives them as
 * MPI_PACKED and unpacks them. Correct (MPI-3.1 sec. 4.2: packed data may be
 * received with any datatype matching its signature, and any message as
 * MPI_PACKED): no findings, no type-mismatch. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, pos = 0, v[4] = {1, 2, 3, 4}, w[4] = {0};
	char buf[256];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "packed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		MPI_Pack(v, 4, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD);
		MPI_Send(buf, pos, MPI_PACKED, 1, 0, MPI_COMM_WORLD); // culprit: send-packed
		MPI_Recv(buf, sizeof buf, MPI_PACKED, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-packed
		pos = 0;
		MPI_Unpack(buf, sizeof buf, &pos, w, 4, MPI_INT, MPI_COMM_WORLD);
	} else {
		MPI_Recv(w, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(v, 4, MPI_INT, 0, 1, MPI_COMM_WORLD);
	}
	if (w[0] != 1 || w[3] != 4) {
		fprintf(stderr, "packed: rank %d: got %d %d %d %d\n", rank, w[0], w[1], w[2], w[3]);
		MPI_Finalize();
		return 1;
	}
	if (rank == 0)
		printf("packed: ok\n");
	MPI_Finalize();
	return 0;
}
