/* resource-leak-fixed (2 ranks): resource-leak's objects, each freed before
 * MPI_Finalize (MPI_Comm_free, MPI_Comm_disconnect, MPI_Win_free,
 * MPI_Type_free, MPI_Group_free, MPI_Op_free): no findings. */
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
			fprintf(stderr, "resource-leak-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < 3; i++)
		MPI_Comm_dup(MPI_COMM_WORLD, &dup[i]);
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &half);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
	MPI_Comm_free(&half);
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &again);
	MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	MPI_Win_fence(0, win);
	MPI_Type_vector(2, 1, 2, MPI_INT, &column);
	MPI_Type_commit(&column);
	MPI_Type_contiguous(2, MPI_INT, &pair);
	MPI_Type_commit(&pair);
	if (rank == 0)
		MPI_Send(&m[0][1], 1, column, 1, 0, MPI_COMM_WORLD);
	else
		MPI_Recv(col, 1, pair, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Type_free(&pair);
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Op_create(maxabs, 1, &op);
	MPI_Allreduce(&rank, &big, 1, MPI_INT, op, MPI_COMM_WORLD);
	if (rank == 1 && (col[0] != 2 || col[1] != 4))
		sum = -1;
	MPI_Op_free(&op);
	MPI_Group_free(&world);
	MPI_Type_free(&column);
	MPI_Win_free(&win);
	MPI_Comm_free(&again);
	for (i = 0; i < 2; i++)
		MPI_Comm_free(&dup[i]);
	MPI_Comm_disconnect(&dup[2]); // (frees it too, once its communication completed)
	if (rank == 0)
		printf("resource-leak-fixed: %s\n", sum == 1 && big == 1 ? "ok" : "wrong values");
	MPI_Finalize();
	return sum == 1 && big == 1 ? 0 : 1;
}
