/* cancel-recv (2 ranks): MPI_Cancel of pending receives, completed by a
 * wait, as MPI 4.0 sec. 3.8.4 defines it: the cancel takes only while the
 * receive is unmatched, and MPI_Test_cancelled on the completion's status
 * tells which.
 * argv[1] "unmatched" (the default): rank 0 posts a receive of tag 99 that
 * nobody sends and an MPI_ANY_SOURCE receive of tag 7 before any message can
 * come, cancels both and completes them with MPI_Waitall: both cancelled.
 * After a barrier rank 1 sends tag 7, which rank 0 receives by name.
 * "matched": rank 1's MPI_Ssend matches rank 0's receive before the barrier
 * both pass, so rank 0's cancel after it fails: MPI_Wait returns the data
 * and MPI_Test_cancelled says not cancelled, whatever the timing.
 * Correct: no findings (before p2ptrace modelled MPI_Cancel, check saw a
 * wait on a receive nobody sends to: a deadlock). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 16

int main(int argc, char **argv)
{
	int rank, size, i, flag;
	const char *mode = argc > 1 ? argv[1] : "unmatched";
	float a[N], b[N], c[N];
	MPI_Request rq[2];
	MPI_Status st[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || (strcmp(mode, "unmatched") != 0 && strcmp(mode, "matched") != 0)) {
		if (rank == 0)
			fprintf(stderr, "cancel-recv: usage: mpirun -n 2 cancel-recv [unmatched|matched] (got %d ranks, %s)\n", size, mode);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < N; i++)
		a[i] = (float)i, b[i] = c[i] = -1;
	if (strcmp(mode, "unmatched") == 0) {
		if (rank == 0) {
			MPI_Irecv(b, N, MPI_FLOAT, 1, 99, MPI_COMM_WORLD, &rq[0]); // culprit: irecv
			MPI_Irecv(c, N, MPI_FLOAT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &rq[1]); // culprit: irecv-any
			MPI_Cancel(&rq[0]); // culprit: cancel
			MPI_Cancel(&rq[1]); // culprit: cancel-any
			MPI_Waitall(2, rq, st); // culprit: waitall
			for (i = 0; i < 2; i++) {
				MPI_Test_cancelled(&st[i], &flag);
				if (!flag) {
					fprintf(stderr, "cancel-recv: rank 0: receive %d not cancelled\n", i);
					MPI_Finalize();
					return 1;
				}
			}
			MPI_Barrier(MPI_COMM_WORLD);
			MPI_Recv(b, N, MPI_FLOAT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		} else {
			MPI_Barrier(MPI_COMM_WORLD);
			MPI_Send(a, N, MPI_FLOAT, 0, 7, MPI_COMM_WORLD); // culprit: send
		}
	} else {
		if (rank == 0) {
			MPI_Irecv(b, N, MPI_FLOAT, 1, 5, MPI_COMM_WORLD, &rq[0]); // culprit: irecv-matched
			MPI_Barrier(MPI_COMM_WORLD);
			MPI_Cancel(&rq[0]); // culprit: cancel-matched
			MPI_Wait(&rq[0], &st[0]); // culprit: wait-matched
			MPI_Test_cancelled(&st[0], &flag);
			if (flag) {
				fprintf(stderr, "cancel-recv: rank 0: the matched receive was cancelled\n");
				MPI_Finalize();
				return 1;
			}
		} else {
			MPI_Ssend(a, N, MPI_FLOAT, 0, 5, MPI_COMM_WORLD); // culprit: ssend
			MPI_Barrier(MPI_COMM_WORLD);
		}
	}
	if (rank == 0) {
		for (i = 0; i < N; i++) {
			if (b[i] != (float)i) {
				fprintf(stderr, "cancel-recv: rank 0: element %d = %g, want %d\n", i, b[i], i);
				MPI_Finalize();
				return 1;
			}
		}
		printf("cancel-recv: ok, %s\n", mode);
	}
	MPI_Finalize();
	return 0;
}
