/* resource-leak (2 ranks): MPI-3.1 sec. 8.7: "The call to MPI_FINALIZE
 * does not free objects created by MPI calls; these objects are freed
 * using MPI_xxx_FREE calls." Each rank duplicates the world three times in
 * a loop (MPI_Comm_dup) and frees none of the copies, splits it
 * (MPI_Comm_split) and frees that one, then splits it again and does not,
 * and makes a window (MPI_Win_create) that it never frees. Every call
 * succeeds and Open MPI says nothing. p2ptrace: a resource-leak on each
 * rank for the loop's MPI_Comm_dup (3 communicators), the second
 * MPI_Comm_split and the MPI_Win_create, at their lines; none for the
 * split that was freed.
 * Fix: resource-leak-fixed. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, i, buf[4] = {0}, sum = 0;
	MPI_Comm dup[3], half, again;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "resource-leak: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < 3; i++)
		MPI_Comm_dup(MPI_COMM_WORLD, &dup[i]); // culprit: dup
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &half);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
	MPI_Comm_free(&half);
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &again); // culprit: split
	MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win); // culprit: win
	MPI_Win_fence(0, win);
	MPI_Win_fence(0, win);
	if (rank == 0)
		printf("resource-leak: %s\n", sum == 1 ? "ok" : "wrong sum");
	MPI_Finalize();
	return sum == 1 ? 0 : 1;
}
