/* rma-conflict (3 ranks): conflicting one-sided accesses in one fence
 * epoch (MPI-3.1 sec. 11.7: a location updated by a put or an accumulate
 * must not be accessed by another RMA operation of the epoch, except by
 * accumulates with the same op and predefined datatype). Rank 0 exposes a
 * window of 4 ints; each mode is an epoch between two MPI_Win_fence calls,
 * all of them one after the other without an argument (an argument runs
 * one):
 *   put: ranks 1 and 2 both MPI_Put to its int 0;
 *   get: rank 1 MPI_Puts to int 1 while rank 2 MPI_Gets it;
 *   acc: rank 1 MPI_Accumulates MPI_SUM into int 2, rank 2 MPI_MAX;
 *   origin: rank 1 writes the origin buffer of its MPI_Put to int 3 before
 *     the fence that completes it (sec. 11.3);
 *   getbuf: rank 2 writes the origin buffer of its MPI_Get of int 3 before
 *     the fence that completes it (sec. 11.3);
 *   getget: rank 2 MPI_Gets ints 0 and 1 into one local int in one epoch:
 *     both Gets write it, in no defined order (a buffer-overlap);
 *   fetch: rank 1 writes the result buffer of its MPI_Fetch_and_op before
 *     the fence that completes it (sec. 11.3.4);
 *   ownwin: rank 1 MPI_Puts to rank 2's int 0 while rank 2 MPI_Gets rank
 *     0's int 3 into its own int 0, the same bytes of its window: the Get
 *     writes them as the Put does;
 *   lock: ranks 1 and 2 each MPI_Put to int 0 in a shared lock epoch
 *     (MPI_Win_lock_all), which excludes nothing, and meet in a barrier of
 *     their own before their MPI_Win_unlock_all: the epochs are open at
 *     the same time, the Puts concurrent;
 *   pscw: rank 0 exposes its window to ranks 1 and 2 (MPI_Win_post), and
 *     each MPI_Puts to int 1 in its access epoch (MPI_Win_start to
 *     MPI_Win_complete), meeting the other in a barrier inside it: the
 *     origins of one exposure epoch access it together;
 *   lockapart: ranks 1 and 2 each MPI_Put to int 3 in a shared lock epoch
 *     of their own, rank 2 0.2 s after rank 1 unlocked: open at different
 *     times, but nothing orders them (no message, no collective call between
 *     them), so they are concurrent all the same;
 *   rput: rank 1 writes the origin buffer of its MPI_Rput (in a lock
 *     epoch: request-based accesses need one) before the MPI_Wait that
 *     completes its request (sec. 11.3.5);
 *   rget: rank 2 writes the origin buffer of its MPI_Rget before the
 *     MPI_Wait that completes its request;
 *   rgetput: rank 1 MPI_Rgets int 3 and MPI_Rputs to it in one shared
 *     lock epoch before the MPI_Wait of the Rget: the two are pending
 *     together (the fixed version waits for the Rget first).
 * Open MPI runs them without a word, and int 0 holds whichever Put landed
 * last. p2ptrace: an rma-conflict naming both calls and lines for each of
 * the first three, ownwin, lock, pscw and lockapart, an in-flight-mutation naming the Put
 * and the fence for origin, a recv-buffer-write naming the Get and the
 * fence for getbuf and for fetch, and the same for rput and rget, naming
 * the MPI_Wait.
 * Fix: rma-conflict-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int want(const char *mode, const char *m) { return mode == NULL || strcmp(mode, m) == 0; }

int main(int argc, char **argv)
{
	int rank, size, buf[4] = {0}, v, got = -1;
	const char *mode = argc > 1 ? argv[1] : NULL;
	MPI_Win win;
	MPI_Comm pair;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "rma-conflict: needs 3 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	v = rank + 1;
	MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	if (want(mode, "put")) {
		if (rank == 1)
			MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // culprit: put-1
		if (rank == 2)
			MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // culprit: put-2
		MPI_Win_fence(0, win);
	}
	if (want(mode, "get")) {
		if (rank == 1)
			MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win); // culprit: get-put
		if (rank == 2)
			MPI_Get(&got, 1, MPI_INT, 0, 1, 1, MPI_INT, win); // culprit: get-get
		MPI_Win_fence(0, win);
	}
	if (want(mode, "acc")) {
		if (rank == 1)
			MPI_Accumulate(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_SUM, win); // culprit: acc-sum
		if (rank == 2)
			MPI_Accumulate(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_MAX, win); // culprit: acc-max
		MPI_Win_fence(0, win);
	}
	if (want(mode, "origin")) {
		if (rank == 1) {
			MPI_Put(&v, 1, MPI_INT, 0, 3, 1, MPI_INT, win); // culprit: origin-put
			v = 42;
		}
		MPI_Win_fence(0, win); // culprit: origin-fence
	}
	if (want(mode, "getbuf")) {
		int mine = 0;
		if (rank == 2) {
			MPI_Get(&mine, 1, MPI_INT, 0, 3, 1, MPI_INT, win); // culprit: getbuf-get
			mine = 5;
		}
		MPI_Win_fence(0, win); // culprit: getbuf-fence
	}
	if (want(mode, "getget")) {
		int mine = 0;
		if (rank == 2) {
			MPI_Get(&mine, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // culprit: getget-1
			MPI_Get(&mine, 1, MPI_INT, 0, 1, 1, MPI_INT, win); // culprit: getget-2
		}
		MPI_Win_fence(0, win);
	}
	if (want(mode, "fetch")) {
		int one = 1, old = -1;
		if (rank == 1) {
			MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 2, MPI_SUM, win); // culprit: fetch-op
			old = 42; // (not a value the window holds: a write of the same bytes is not seen)
		}
		MPI_Win_fence(0, win); // culprit: fetch-fence
	}
	if (want(mode, "ownwin")) {
		if (rank == 1)
			MPI_Put(&v, 1, MPI_INT, 2, 0, 1, MPI_INT, win); // culprit: ownwin-put
		if (rank == 2)
			MPI_Get(&buf[0], 1, MPI_INT, 0, 3, 1, MPI_INT, win); // culprit: ownwin-get
		MPI_Win_fence(0, win);
	}
	if (want(mode, "lock")) {
		MPI_Comm_split(MPI_COMM_WORLD, rank > 0, rank, &pair);
		if (rank > 0) {
			MPI_Win_lock_all(0, win);
			if (rank == 1)
				MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // culprit: lock-1
			else
				MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // culprit: lock-2
			MPI_Barrier(pair);
			MPI_Win_unlock_all(win);
		}
		MPI_Comm_free(&pair);
	}
	if (want(mode, "pscw")) {
		MPI_Group world, grp;
		int ranks[2] = {1, 2}, zero = 0;
		MPI_Comm_group(MPI_COMM_WORLD, &world);
		MPI_Comm_split(MPI_COMM_WORLD, rank > 0, rank, &pair);
		if (rank == 0) {
			MPI_Group_incl(world, 2, ranks, &grp);
			MPI_Win_post(grp, 0, win);
			MPI_Win_wait(win);
		} else {
			MPI_Group_incl(world, 1, &zero, &grp);
			MPI_Win_start(grp, 0, win);
			if (rank == 1)
				MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win); // culprit: pscw-1
			else
				MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win); // culprit: pscw-2
			MPI_Barrier(pair);
			MPI_Win_complete(win);
		}
		MPI_Group_free(&grp);
		MPI_Group_free(&world);
		MPI_Comm_free(&pair);
	}
	if (want(mode, "lockapart")) {
		double t;
		if (rank == 1) {
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
			MPI_Put(&v, 1, MPI_INT, 0, 3, 1, MPI_INT, win); // culprit: lockapart-1
			MPI_Win_unlock(0, win);
		}
		if (rank == 2) {
			for (t = MPI_Wtime(); MPI_Wtime() - t < 0.2;)
				;
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
			MPI_Put(&v, 1, MPI_INT, 0, 3, 1, MPI_INT, win); // culprit: lockapart-2
			MPI_Win_unlock(0, win);
		}
	}
	if (want(mode, "rput") && rank == 1) {
		MPI_Request req;
		int w = 7;
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		MPI_Rput(&w, 1, MPI_INT, 0, 3, 1, MPI_INT, win, &req); // culprit: rput-put
		w = 8;
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: rput-wait
		MPI_Win_unlock(0, win);
	}
	if (want(mode, "rget") && rank == 2) {
		MPI_Request req;
		int mine = 0;
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Rget(&mine, 1, MPI_INT, 0, 2, 1, MPI_INT, win, &req); // culprit: rget-get
		mine = 9;
		MPI_Wait(&req, MPI_STATUS_IGNORE); // culprit: rget-wait
		MPI_Win_unlock(0, win);
	}
	if (want(mode, "rgetput") && rank == 1) {
		MPI_Request reqs[2];
		int got = 0, w = 5;
		MPI_Win_lock_all(0, win);
		MPI_Rget(&got, 1, MPI_INT, 0, 3, 1, MPI_INT, win, &reqs[0]); // culprit: rgetput-get
		MPI_Rput(&w, 1, MPI_INT, 0, 3, 1, MPI_INT, win, &reqs[1]); // culprit: rgetput-put
		MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
		MPI_Win_unlock_all(win);
	}
	MPI_Win_free(&win);
	if (rank == 0)
		printf("rma-conflict: ok\n");
	MPI_Finalize();
	return 0;
}
