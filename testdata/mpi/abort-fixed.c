/* abort-fixed (2 ranks): the fix of abort: rank 0 asks for a count within rank 1's capacity; rank 1 validates it and carries on. Correct: no findings. */
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
			fprintf(stderr, "abort-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		job[0] = 42;        /* job id */
		job[1] = CAP; /* elements the job needs */
		MPI_Send(job, 2, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send
	} else {
		MPI_Recv(job, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		if (job[1] > CAP) {
			fprintf(stderr, "abort-fixed: rank 1: job %d needs %d elements, capacity is %d: aborting\n", job[0], job[1], CAP);
			MPI_Abort(MPI_COMM_WORLD, 3); // culprit: abort
		}
		printf("abort-fixed: ok, job %d with %d elements\n", job[0], job[1]);
	}
	MPI_Finalize();
	return 0;
}
