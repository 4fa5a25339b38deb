/* master-worker (4 ranks): rank 0 hands out 12 tasks, one at a time, to
 * whichever worker returns a result first (MPI_ANY_SOURCE, the pattern real
 * codes use on purpose), and sends each worker a stop when the tasks are
 * done. Correct whatever the order of the results: check must find nothing
 * (its re-runs with other orders run clean: a note). */
#include <mpi.h>
#include <stdio.h>

#define TASKS 12
#define WORK 1
#define STOP 2

int main(int argc, char **argv)
{
	int rank, size, task, sent = 0, done = 0, sum = 0, result;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0) {
		for (int w = 1; w < size; w++) {
			task = sent++;
			MPI_Send(&task, 1, MPI_INT, w, WORK, MPI_COMM_WORLD);
		}
		while (done < TASKS) {
			MPI_Recv(&result, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st); // culprit: results
			sum += result;
			done++;
			if (sent < TASKS) {
				task = sent++;
				MPI_Send(&task, 1, MPI_INT, st.MPI_SOURCE, WORK, MPI_COMM_WORLD);
			} else {
				MPI_Send(&task, 1, MPI_INT, st.MPI_SOURCE, STOP, MPI_COMM_WORLD);
			}
		}
		if (sum != TASKS * (TASKS - 1)) {
			fprintf(stderr, "master-worker: sum %d, want %d\n", sum, TASKS * (TASKS - 1));
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		printf("master-worker: ok, sum %d\n", sum);
	} else {
		for (;;) {
			MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			if (st.MPI_TAG == STOP)
				break;
			result = 2 * task;
			MPI_Send(&result, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
		}
	}
	MPI_Finalize();
	return 0;
}
