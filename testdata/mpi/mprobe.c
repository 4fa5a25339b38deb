/* mprobe (3 ranks): MPI-3 matched probes, correct. Ranks 1 and 2 each send
 * rank 0 a message of their own size (rank 1: 4 ints, rank 2: 8 ints).
 * Rank 0 takes them in arrival order with MPI_Mprobe from MPI_ANY_SOURCE
 * and receives exactly the probed message with MPI_Mrecv, into a buffer
 * sized from the probe's status: a matched probe takes its message off the
 * matching queues (MPI 3.1 sec. 3.8.2), so no other receive can steal it.
 * With the argument "improbe", rank 0 polls MPI_Improbe until it finds a
 * message and receives it with MPI_Imrecv and MPI_Wait instead. Either way
 * it ends with a matched probe of MPI_PROC_NULL, whose message
 * (MPI_MESSAGE_NO_PROC) is received at once, empty. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, i, n, flag, sum = 0, buf[8], msg[8];
	int improbe = argc > 1 && strcmp(argv[1], "improbe") == 0;
	MPI_Message m;
	MPI_Status st;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "mprobe: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (i = 1; i < size; i++) {
			if (improbe) {
				do
					MPI_Improbe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, &m, &st); // culprit: improbe
				while (!flag);
			} else {
				MPI_Mprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &m, &st); // culprit: mprobe
			}
			MPI_Get_count(&st, MPI_INT, &n);
			if (improbe) {
				MPI_Imrecv(buf, n, MPI_INT, &m, &req); // culprit: imrecv
				MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: wait
			} else {
				MPI_Mrecv(buf, n, MPI_INT, &m, MPI_STATUS_IGNORE); // culprit: mrecv
			}
			sum += n;
		}
		MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st);
		MPI_Mrecv(buf, 8, MPI_INT, &m, &st);
		if (sum != 12 || st.MPI_SOURCE != MPI_PROC_NULL) {
			fprintf(stderr, "mprobe: received %d ints, want 12\n", sum);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		printf("mprobe: ok\n");
	} else {
		for (i = 0; i < 8; i++)
			msg[i] = rank;
		MPI_Send(msg, 4 * rank, MPI_INT, 0, 0, MPI_COMM_WORLD); // culprit: send
	}
	MPI_Finalize();
	return 0;
}
