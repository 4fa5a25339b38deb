/* probe-race-fixed (3 ranks): the fix of probe-race: rank 0 probes
 * MPI_ANY_SOURCE, asks the status how many ints the message holds
 * (MPI_Get_count) and receives that many from the status's source, then
 * the other rank's message the same way. Correct whatever the order: check
 * re-runs the job with the probe pinned to rank 2, it runs clean: a note,
 * no finding. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, i, k, n, buf[8], msg[8];
	double t;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "probe-race-fixed: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (k = 0; k < 2; k++) {
			MPI_Probe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st); // culprit: probe-any
			MPI_Get_count(&st, MPI_INT, &n);
			if (n > 8) {
				fprintf(stderr, "probe-race-fixed: rank 0: %d ints from rank %d\n", n, st.MPI_SOURCE);
				MPI_Finalize();
				return 1;
			}
			MPI_Recv(buf, n, MPI_INT, st.MPI_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-probed
			if (n != 4 * st.MPI_SOURCE || buf[0] != st.MPI_SOURCE) {
				fprintf(stderr, "probe-race-fixed: rank 0: %d ints from rank %d saying %d\n", n, st.MPI_SOURCE, buf[0]);
				MPI_Finalize();
				return 1;
			}
		}
		printf("probe-race-fixed: ok\n");
	} else {
		if (rank == 2)
			for (t = MPI_Wtime(); MPI_Wtime() - t < 0.2;)
				;
		for (i = 0; i < 8; i++)
			msg[i] = rank;
		MPI_Send(msg, 4 * rank, MPI_INT, 0, 0, MPI_COMM_WORLD); // culprit: send
	}
	MPI_Finalize();
	return 0;
}
