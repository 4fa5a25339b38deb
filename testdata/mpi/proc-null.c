/* proc-null (2 ranks): MPI_PROC_NULL as peer, as codes at the edge of a domain use it: each rank sends to and receives from MPI_PROC_NULL (both complete at once, the receive with source MPI_PROC_NULL), probes it with MPI_Probe and MPI_Iprobe (which answer at once: flag set, source MPI_PROC_NULL), then exchanges one int with the other rank. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, peer, flag = 0, x = 0, y = -1;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "proc-null: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	peer = 1 - rank;
	MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD); // culprit: send-null
	MPI_Recv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st); // culprit: recv-null
	if (st.MPI_SOURCE != MPI_PROC_NULL || y != -1) {
		fprintf(stderr, "proc-null: rank %d: Recv from MPI_PROC_NULL: source %d, value %d\n", rank, st.MPI_SOURCE, y);
		MPI_Finalize();
		return 1;
	}
	MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st); // culprit: probe-null
	MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &st); // culprit: iprobe-null
	if (!flag || st.MPI_SOURCE != MPI_PROC_NULL) {
		fprintf(stderr, "proc-null: rank %d: Iprobe of MPI_PROC_NULL: flag %d, source %d\n", rank, flag, st.MPI_SOURCE);
		MPI_Finalize();
		return 1;
	}
	x = 100 + rank;
	MPI_Sendrecv(&x, 1, MPI_INT, peer, 1, &y, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: exchange
	if (y != 100 + peer) {
		fprintf(stderr, "proc-null: rank %d got %d, want %d\n", rank, y, 100 + peer);
		MPI_Finalize();
		return 1;
	}
	if (rank == 0)
		printf("proc-null: ok\n");
	MPI_Finalize();
	return 0;
}
