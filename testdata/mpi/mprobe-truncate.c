/* mprobe-truncate (2 ranks): rank 1 sends 8 ints; rank 0 probes them with
 * MPI_Mprobe and receives the probed message with MPI_Mrecv into a buffer
 * of 4 ints: the message is larger than the buffer, a truncation
 * (MPI_ERR_TRUNCATE; fatal under MPI_ERRORS_ARE_FATAL, mpirun exits 15).
 * Fix: size the buffer from the probe's status (mprobe). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, i, buf[4], msg[8];
	MPI_Message m;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mprobe-truncate: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		MPI_Mprobe(1, 0, MPI_COMM_WORLD, &m, &st); // culprit: mprobe
		MPI_Mrecv(buf, 4, MPI_INT, &m, MPI_STATUS_IGNORE); // culprit: mrecv
		printf("mprobe-truncate: ok\n");
	} else {
		for (i = 0; i < 8; i++)
			msg[i] = i;
		MPI_Send(msg, 8, MPI_INT, 0, 0, MPI_COMM_WORLD); // culprit: send
	}
	MPI_Finalize();
	return 0;
}
