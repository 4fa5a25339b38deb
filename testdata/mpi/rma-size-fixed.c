/* rma-size-fixed (2 ranks): the fix of rma-size: each access names the
 * same size on both sides, also as one element of a contiguous type of 4
 * ints against 4 MPI_INT, and a Put of 2 ints into a target of 4 fits (a
 * larger target is allowed, as a larger receive is), and a Put from
 * MPI_BOTTOM with a datatype of absolute addresses (sec. 4.1.12: a buffer
 * all the same). Correct: no findings. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, buf[8] = {0}, v[4] = {1, 2, 3, 4}, got[4] = {0}, res[4] = {0};
	MPI_Win win;
	MPI_Datatype four, abs;
	MPI_Aint at;
	int four_ints = 4;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "rma-size-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Type_contiguous(4, MPI_INT, &four);
	MPI_Type_commit(&four);
	MPI_Get_address(v, &at);
	MPI_Type_create_hindexed(1, &four_ints, &at, MPI_INT, &abs);
	MPI_Type_commit(&abs);
	MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	if (rank == 1)
		MPI_Put(v, 1, four, 0, 0, 4, MPI_INT, win); // culprit: put
	MPI_Win_fence(0, win);
	if (rank == 1)
		MPI_Get(got, 4, MPI_INT, 0, 0, 1, four, win); // culprit: get
	MPI_Win_fence(0, win);
	if (rank == 1)
		MPI_Put(MPI_BOTTOM, 1, abs, 0, 4, 4, MPI_INT, win); // culprit: bottom
	MPI_Win_fence(0, win);
	if (rank == 1)
		MPI_Get_accumulate(v, 2, MPI_INT, res, 4, MPI_INT, 0, 4, 2, MPI_INT, MPI_SUM, win); // culprit: getacc
	MPI_Win_fence(0, win);
	MPI_Win_free(&win);
	MPI_Type_free(&four);
	MPI_Type_free(&abs);
	if (rank == 1 && (got[0] != 1 || got[3] != 4)) {
		fprintf(stderr, "rma-size-fixed: got %d %d %d %d, want 1 2 3 4\n", got[0], got[1], got[2], got[3]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0)
		printf("rma-size-fixed: ok, %d %d %d %d\n", buf[0], buf[1], buf[2], buf[3]);
	MPI_Finalize();
	return 0;
}
