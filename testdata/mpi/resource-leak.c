/* resource-leak (2 ranks): MPI-3.1 sec. 8.7: "The call to MPI_FINALIZE
 * does not free objects created by MPI calls; these objects are freed
 * using MPI_xxx_FREE calls." Each rank duplicates the world three times in
 * a loop (MPI_Comm_dup) and frees none of the copies, splits it
 * (MPI_Comm_split) and frees that one, then splits it again and does not;
 * makes a window (MPI_Win_create), a datatype (MPI_Type_vector, used to
 * send a column), a group (MPI_Comm_group) and a reduction op
 * (MPI_Op_create, used in an MPI_Allreduce) that it never frees, and a
 * second datatype (MPI_Type_contiguous) that it frees. Every call succeeds
 * and Open MPI says nothing. p2ptrace: a resource-leak for each of the
 * five sites that made what was never freed, each naming both ranks (the
 * loop's MPI_Comm_dup: 3 communicators each); none for the split and the
 * datatype that were freed.
 * Fix: resource-leak-fixed. */
#include <mpi.h>
#include <stdio.h>

static void maxabs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *a = in, *b = inout;
	(void)dt;
	for (int i = 0; i < *len; i++) {
		int x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i];
		b[i] = x > y ? x : y;
	}
}

int main(int argc, char **argv)
{
	int rank, size, i, buf[4] = {0}, sum = 0, m[2][2] = {{1, 2}, {3, 4}}, col[2] = {0}, big = 0;
	MPI_Comm dup[3], half, again;
	MPI_Win win;
	MPI_Datatype column, pair;
	MPI_Group world;
	MPI_Op op;

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
	MPI_Type_vector(2, 1, 2, MPI_INT, &column); // culprit: type
	MPI_Type_commit(&column);
	MPI_Type_contiguous(2, MPI_INT, &pair);
	MPI_Type_commit(&pair);
	if (rank == 0)
		MPI_Send(&m[0][1], 1, column, 1, 0, MPI_COMM_WORLD);
	else
		MPI_Recv(col, 1, pair, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Type_free(&pair);
	MPI_Comm_group(MPI_COMM_WORLD, &world); // culprit: group
	MPI_Op_create(maxabs, 1, &op); // culprit: op
	MPI_Allreduce(&rank, &big, 1, MPI_INT, op, MPI_COMM_WORLD);
	if (rank == 1 && (col[0] != 2 || col[1] != 4))
		sum = -1;
	if (rank == 0)
		printf("resource-leak: %s\n", sum == 1 && big == 1 ? "ok" : "wrong values");
	MPI_Finalize();
	return sum == 1 && big == 1 ? 0 : 1;
}
