/* rma-size (2 ranks): one-sided accesses whose two sides differ in size.
 * MPI-3.1 sec. 11.3.1: a Put moves data as a send of the origin's count and
 * datatype received with the target's, and "the message sent must fit,
 * without truncation, in the target buffer"; a Get the other way (sec.
 * 11.3.2); the fetch of a Get_accumulate into its result buffer as a Get
 * (sec. 11.3.4). Open MPI checks none of it: the Put writes past the 2 ints
 * the target named, into the next element of rank 0's window.
 * put (default): rank 1 puts 4 ints where the target names 2.
 * get: rank 1 gets 4 ints of the target into an origin of 2.
 * getacc: rank 1's MPI_Get_accumulate fetches 4 ints into a result of 2.
 * null: rank 1 puts 4 ints from a NULL origin buffer (a predefined
 *   datatype: no buffer); Open MPI's copy fails with EFAULT and retries for
 *   ever (plain mpirun hangs).
 * win-null: rank 0 makes its part of the window of 32 bytes at NULL (sec.
 *   11.2.1: no memory there); Open MPI makes it, and rank 1's Put into it
 *   fails with EFAULT for ever (plain mpirun hangs). p2ptrace fails rank
 *   0's MPI_Win_create (MPI_ERR_BUFFER).
 * type-null: rank 1 puts 4 ints with the target datatype
 *   MPI_DATATYPE_NULL (what MPI_Type_free leaves in a handle); Open MPI
 *   takes it for a type of no bytes.
 * p2ptrace fails the call as an MPI that checked would (MPI_ERR_TRUNCATE,
 * MPI_ERR_BUFFER, MPI_ERR_TYPE, under MPI_ERRORS_ARE_FATAL): a truncation
 * (an invalid call) at its line.
 * Fix: rma-size-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, buf[8] = {0}, v[4] = {1, 2, 3, 4}, got[4] = {0};
	const char *mode = argc > 1 ? argv[1] : "put";
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "rma-size: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (strcmp(mode, "win-null") == 0 && rank == 0)
		MPI_Win_create(NULL, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win); // culprit: win-null
	else
		MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	if (rank == 1) {
		if (strcmp(mode, "get") == 0)
			MPI_Get(got, 2, MPI_INT, 0, 0, 4, MPI_INT, win); // culprit: get
		else if (strcmp(mode, "null") == 0)
			MPI_Put(NULL, 4, MPI_INT, 0, 0, 4, MPI_INT, win); // culprit: null
		else if (strcmp(mode, "getacc") == 0)
			MPI_Get_accumulate(v, 4, MPI_INT, got, 2, MPI_INT, 0, 0, 4, MPI_INT, MPI_SUM, win); // culprit: getacc
		else if (strcmp(mode, "type-null") == 0)
			MPI_Put(v, 4, MPI_INT, 0, 0, 4, MPI_DATATYPE_NULL, win); // culprit: type-null
		else if (strcmp(mode, "win-null") == 0)
			MPI_Put(v, 4, MPI_INT, 0, 0, 4, MPI_INT, win);
		else
			MPI_Put(v, 4, MPI_INT, 0, 0, 2, MPI_INT, win); // culprit: put
	}
	MPI_Win_fence(0, win);
	MPI_Win_free(&win);
	if (rank == 0)
		printf("rma-size: ok, %d %d %d %d\n", buf[0], buf[1], buf[2], buf[3]);
	MPI_Finalize();
	return 0;
}
