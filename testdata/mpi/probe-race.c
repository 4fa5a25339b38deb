/* probe-race (3 ranks): ranks 1 and 2 each send rank 0 a message of their
 * own size (rank 1: 4 ints, rank 2: 8 ints). Rank 0 probes MPI_ANY_SOURCE
 * and receives the probed message from the status's source, as the MPI
 * idiom goes, but into a buffer sized for rank 1's message: it assumes rank
 * 1's comes first (rank 2 is slower, so it usually does). When rank 2's
 * comes first, the receive is truncated (MPI_ERR_TRUNCATE aborts the job).
 * The receive names its source: the race is the probe's. check enumerates
 * the probe's other sender and re-runs the job with the probe pinned to rank
 * 2: a message-race at the probe with the abort as evidence. With the
 * argument "iprobe", rank 0 polls MPI_Iprobe from MPI_ANY_SOURCE until it
 * finds a message instead: the re-run pins the Iprobe that found it. With
 * "mprobe" it takes the message with the MPI-3 matched probe MPI_Mprobe and
 * receives it with MPI_Mrecv into the same buffer; with "improbe", a loop of
 * MPI_Improbe and MPI_Imrecv + MPI_Wait: the re-run pins the matched probe.
 * Fix: probe-race-fixed (it sizes the receive from the status). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, i, flag, mine = 0, first[4], second[8], msg[8];
	double t;
	MPI_Status st;
	MPI_Message m;
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "probe-race: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		if (argc > 1 && strcmp(argv[1], "iprobe") == 0) {
			do
				MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, &st); // culprit: iprobe-any
			while (!flag);
		} else if (argc > 1 && strcmp(argv[1], "mprobe") == 0) {
			MPI_Mprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &m, &st); // culprit: mprobe-any
			MPI_Mrecv(first, 4, MPI_INT, &m, MPI_STATUS_IGNORE); // culprit: mrecv-probed
			mine = 1;
		} else if (argc > 1 && strcmp(argv[1], "improbe") == 0) {
			do
				MPI_Improbe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, &m, &st); // culprit: improbe-any
			while (!flag);
			MPI_Imrecv(first, 4, MPI_INT, &m, &req); // culprit: imrecv-probed
			MPI_Wait(&req, MPI_STATUS_IGNORE);
			mine = 1;
		} else {
			MPI_Probe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st); // culprit: probe-any
		}
		if (!mine)
			MPI_Recv(first, 4, MPI_INT, st.MPI_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-probed
		MPI_Recv(second, 8, MPI_INT, 3 - st.MPI_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv-other
		printf("probe-race: ok, rank %d came first\n", st.MPI_SOURCE);
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
