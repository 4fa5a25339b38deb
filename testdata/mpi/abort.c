/* abort (2 ranks): rank 0 sends rank 1 a job description whose element count (32) exceeds rank 1's capacity (16); rank 1 validates it, prints an error and calls MPI_Abort(MPI_COMM_WORLD, 3), which kills the job (exit status non-zero). Every message is matched: the abort is the only thing to report. Fix: abort-fixed. */
#include <mpi.h>
#include <stdio.h>

#define CAP 16

int main(int argc, char **argv)
{
	int rank, size, job[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "abort: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		job[0] = 42;        /* job id */
		job[1] = 2 * CAP; /* elements the job needs */
		MPI_Send(job, 2, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send
	} else {
		MPI_Recv(job, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		if (job[1] > CAP) {
			fprintf(stderr, "abort: rank 1: job %d needs %d elements, capacity is %d: aborting\n", job[0], job[1], CAP);
			MPI_Abort(MPI_COMM_WORLD, 3); // culprit: abort
		}
		printf("abort: ok, job %d with %d elements\n", job[0], job[1]);
	}
	MPI_Finalize();
	return 0;
}
