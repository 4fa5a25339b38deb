/* rma-conflict-fixed (3 ranks): rma-conflict's accesses without a
 * conflict, every mode in one run (an argument runs one). put: ranks 1 and
 * 2 MPI_Put to ints 0 and 3, disjoint bytes. get: rank 2 MPI_Gets int 1 an
 * epoch after rank 1's MPI_Put (a fence between them). acc: both
 * MPI_Accumulate with MPI_SUM into int 2, which MPI-3.1 sec. 11.7 allows
 * concurrently (the same op and predefined datatype). lock: ranks 1 and
 * 2 MPI_Put to int 0 in exclusive lock epochs (the lock serializes them),
 * then rank 1 MPI_Puts to int 1 in a shared one and rank 2 MPI_Gets it in
 * another, after a barrier that follows rank 1's unlock. pscw: ranks 1
 * and 2 MPI_Put to ints 0 and 3, disjoint bytes, in access epochs of one
 * exposure epoch of rank 0. fetch: rank 1 MPI_Fetch_and_ops int 2 and
 * reads the value fetched after the fence. rput and rget: rank 1 MPI_Rputs to int 0 and
 * rank 2 MPI_Rgets int 1, each in a lock epoch, and each touches its origin
 * buffer only after the MPI_Wait that completes the request. rgetput:
 * rank 1 MPI_Rgets int 3 and MPI_Rputs to it in one shared lock epoch,
 * after the MPI_Wait of the Rget: its data is in the origin buffer, the
 * read done (MPI-3.1 sec. 11.3.5; MPICH's req_example). getget: rank
 * 2 MPI_Gets ints 0 and 1 into two local ints in one lock epoch. ownwin:
 * rank 1 MPI_Puts to rank 2's int 0 while rank 2 MPI_Gets into its own int
 * 1, other bytes of its window. flush: rank 1 MPI_Puts to int 2 and
 * MPI_Gets it back in one shared lock epoch, an MPI_Win_flush between
 * them. acctype: accumulates of one predefined
 * datatype through target types built differently (two MPI_INTs, one
 * contiguous of two), and of MPI_UNSIGNED, in one fence epoch. Rank 0 and
 * rank 2 check the values. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int want(const char *mode, const char *m) { return mode == NULL || strcmp(mode, m) == 0; }

int main(int argc, char **argv)
{
	int rank, size, buf[4] = {0}, v, got = -1, bad = 0;
	const char *mode = argc > 1 ? argv[1] : NULL;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "rma-conflict-fixed: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	v = rank + 1;
	MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	if (want(mode, "put") && rank > 0)
		MPI_Put(&v, 1, MPI_INT, 0, rank == 1 ? 0 : 3, 1, MPI_INT, win);
	if (want(mode, "get") && rank == 1)
		MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
	if (want(mode, "acc") && rank > 0)
		MPI_Accumulate(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_SUM, win);
	MPI_Win_fence(0, win);
	if (want(mode, "get") && rank == 2)
		MPI_Get(&got, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
	MPI_Win_fence(0, win);
	if (rank == 0)
		bad = (want(mode, "put") && (buf[0] != 2 || buf[3] != 3)) || (want(mode, "acc") && buf[2] != 5);
	if (rank == 2)
		bad = want(mode, "get") && got != 2;
	if (want(mode, "ownwin")) {
		if (rank == 1)
			MPI_Put(&v, 1, MPI_INT, 2, 0, 1, MPI_INT, win);
		if (rank == 2)
			MPI_Get(&buf[1], 1, MPI_INT, 0, 3, 1, MPI_INT, win);
		MPI_Win_fence(0, win);
		if (rank == 2)
			bad |= buf[0] != 2 || (want(mode, "put") && buf[1] != 3);
	}
	if (want(mode, "fetch")) {
		int one = 1, old = -1;
		MPI_Barrier(MPI_COMM_WORLD); // (rank 0 read its window above: no access may land meanwhile)
		if (rank == 1)
			MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 2, MPI_SUM, win);
		MPI_Win_fence(0, win);
		if (rank == 1)
			bad |= want(mode, "acc") && old != 5;
		old = 0;
	}
	if (want(mode, "lock")) {
		MPI_Barrier(MPI_COMM_WORLD); // (rank 0 read its window above: no Put may land meanwhile)
		if (rank > 0) {
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
			MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
			MPI_Win_unlock(0, win);
		}
		if (rank == 1) {
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
			MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
			MPI_Win_unlock(0, win);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 2) {
			got = -1;
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
			MPI_Get(&got, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
			MPI_Win_unlock(0, win);
			bad |= got != 2;
		}
	}
	if (want(mode, "pscw")) {
		MPI_Group world, grp;
		int ranks[2] = {1, 2}, zero = 0;
		MPI_Barrier(MPI_COMM_WORLD); // (the lock epochs above are over)
		MPI_Comm_group(MPI_COMM_WORLD, &world);
		if (rank == 0) {
			MPI_Group_incl(world, 2, ranks, &grp);
			MPI_Win_post(grp, 0, win);
			MPI_Win_wait(win);
			bad |= buf[0] != 2 || buf[3] != 3;
		} else {
			MPI_Group_incl(world, 1, &zero, &grp);
			MPI_Win_start(grp, 0, win);
			MPI_Put(&v, 1, MPI_INT, 0, rank == 1 ? 0 : 3, 1, MPI_INT, win);
			MPI_Win_complete(win);
		}
		MPI_Group_free(&grp);
		MPI_Group_free(&world);
	}
	if (want(mode, "rput") || want(mode, "rget"))
		MPI_Barrier(MPI_COMM_WORLD); // (the epochs above are over)
	if (want(mode, "rput") && rank == 1) {
		MPI_Request req;
		int w = 7;
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		MPI_Rput(&w, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		w = 8;
		MPI_Win_unlock(0, win);
	}
	if (want(mode, "rget") && rank == 2) {
		MPI_Request req;
		int mine = 0;
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Rget(&mine, 1, MPI_INT, 0, 1, 1, MPI_INT, win, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		bad |= want(mode, "lock") && mine != 2;
		mine = 9;
		MPI_Win_unlock(0, win);
	}
	if (want(mode, "flush") && rank == 1) {
		/* One origin's Put and then Get of one int in one shared lock
		 * epoch, ordered by the MPI_Win_flush between them: it completes
		 * the Put at the target (MPI-3.1 sec. 11.5.4). */
		int back = -1;
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Put(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
		MPI_Win_flush(0, win);
		MPI_Get(&back, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
		MPI_Win_unlock(0, win);
		bad |= back != v;
	}
	if (want(mode, "rgetput") && rank == 1) {
		MPI_Request req;
		int got = 0;
		MPI_Win_lock_all(0, win);
		MPI_Rget(&got, 1, MPI_INT, 0, 3, 1, MPI_INT, win, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		got++;
		MPI_Rput(&got, 1, MPI_INT, 0, 3, 1, MPI_INT, win, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		MPI_Win_unlock_all(win);
	}
	if (want(mode, "getget") && rank == 2) {
		int two[2] = {0, 0};
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Get(&two[0], 1, MPI_INT, 0, 0, 1, MPI_INT, win);
		MPI_Get(&two[1], 1, MPI_INT, 0, 1, 1, MPI_INT, win);
		MPI_Win_unlock(0, win);
	}
	if (want(mode, "acctype")) {
		/* Accumulates of one predefined datatype, however the target type
		 * is built, are allowed together: rank 1 MPI_SUMs two MPI_INTs and
		 * rank 2 one contiguous(2, MPI_INT) into ints 0 and 1; both
		 * MPI_BOR an MPI_UNSIGNED into int 3. */
		MPI_Datatype two;
		unsigned bits = 1u << rank;
		int add[2] = {rank, rank};
		MPI_Type_contiguous(2, MPI_INT, &two);
		MPI_Type_commit(&two);
		MPI_Barrier(MPI_COMM_WORLD); // (the lock epochs above are over)
		MPI_Win_fence(MPI_MODE_NOPRECEDE, win); // (no fence epoch around them)
		if (rank == 1)
			MPI_Accumulate(add, 2, MPI_INT, 0, 0, 2, MPI_INT, MPI_SUM, win);
		if (rank == 2)
			MPI_Accumulate(add, 1, two, 0, 0, 1, two, MPI_SUM, win);
		if (rank > 0)
			MPI_Accumulate(&bits, 1, MPI_UNSIGNED, 0, 3, 1, MPI_UNSIGNED, MPI_BOR, win);
		MPI_Win_fence(0, win);
		MPI_Type_free(&two);
		if (rank == 0 && mode != NULL)
			bad |= buf[0] != 3 || buf[1] != 3 || buf[3] != 6;
	}
	MPI_Win_free(&win);
	if (bad) {
		fprintf(stderr, "rma-conflict-fixed: rank %d: wrong values %d %d %d %d, got %d\n", rank, buf[0], buf[1], buf[2], buf[3], got);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0)
		printf("rma-conflict-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
