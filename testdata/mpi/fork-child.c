/* fork-child (2 ranks): each rank forks a helper process that exits with
 * exit(0) and waits for it; the ranks exchange a barrier and finalize; then
 * rank 0 forks one more helper, which dies of SIGSEGV. A child inherits the
 * shim's exit and signal handlers and the rank's segment: what the child
 * does is not the rank's, so the recording is complete with no findings (a
 * child's crash after MPI_Finalize read as the rank's made the trace
 * crashed; a child's exit read as the rank's could end the job as aborted).
 * Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, size;
	pid_t p;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "fork-child: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	fflush(stdout);
	p = fork();
	if (p == 0)
		exit(0); /* exit, not _exit: the exit handlers run */
	waitpid(p, NULL, 0);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	if (rank == 0) {
		/* after MPI_Finalize, where nothing the rank does later would
		 * overwrite what a child left in the segment */
		fflush(stdout);
		p = fork();
		if (p == 0) {
			volatile int *none = NULL;
			*none = 1; /* the child dies of SIGSEGV */
		}
		waitpid(p, NULL, 0);
		printf("fork-child: ok\n");
	}
	return 0;
}
