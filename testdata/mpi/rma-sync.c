/* rma-sync (2 ranks): one-sided communication against its synchronization
 * rules (MPI-3.1 sec. 11.5). p2ptrace marks the RMA calls (it does not
 * record them) and gives each window the error handler it gives the world,
 * so that an RMA error names its rank, call and line, and a rank blocked in
 * an RMA synchronization call is named there.
 *   put (default): rank 1 calls MPI_Put before any MPI_Win_fence, outside
 *     an access epoch: Open MPI fails it with MPI_ERR_RMA_SYNC, which a
 *     window's default handler (MPI_ERRORS_ARE_FATAL) made an anonymous
 *     crash.
 *   unlock: rank 1 calls MPI_Win_unlock of rank 0 without a MPI_Win_lock:
 *     MPI_ERR_RMA_SYNC.
 *   nosync: rank 1 calls MPI_Put with no synchronization call at all and
 *     goes on to MPI_Win_free: MPI_ERR_RMA_SYNC (the shim fails it at the
 *     call: Open MPI's one-sided components do not check every such Put).
 *   free-locked: rank 1 locks rank 0's window, puts, and frees the window
 *     without MPI_Win_unlock (sec. 11.2.5: a window is freed only after the
 *     rank completed its involvement in it): MPI_ERR_RMA_SYNC at the free.
 *   free-pending: rank 1 puts after a fence and frees the window with no
 *     fence to complete the Put: likewise.
 *   wait: rank 0 exposes its window (MPI_Win_post to rank 1) and waits for
 *     the access epoch to end (MPI_Win_wait), but rank 1 never starts one:
 *     it goes on to MPI_Win_free, which is collective: Open MPI hangs.
 *   lock-in-fence: rank 1 locks rank 0's window, puts and unlocks between
 *     two MPI_Win_fence calls, inside their fence epoch (sec. 11.5.3: a
 *     window is not locked and exposed at once): Open MPI runs it; the
 *     record names the lock.
 *   lock-all: rank 1 holds a lock of rank 0's window and calls
 *     MPI_Win_lock_all, whose epoch overlaps it (sec. 11.5: an origin's
 *     access epochs on a window are disjoint): Open MPI runs it; the shim
 *     fails it with MPI_ERR_RMA_SYNC.
 * Fix: rma-sync-fixed (every mode with its epoch: fence, lock and unlock,
 * post-start-complete-wait). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, buf[4] = {0}, v;
	const char *mode = argc > 1 ? argv[1] : "put";
	MPI_Win win;
	MPI_Group world, peer;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "rma-sync: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	v = rank + 1;
	MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	if (strcmp(mode, "unlock") == 0) {
		if (rank == 1)
			MPI_Win_unlock(0, win); // culprit: unlock
	} else if (strcmp(mode, "nosync") == 0) {
		if (rank == 1)
			MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // culprit: put-nosync
	} else if (strcmp(mode, "free-locked") == 0) {
		if (rank == 1) {
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
			MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
		}
	} else if (strcmp(mode, "free-pending") == 0) {
		MPI_Win_fence(0, win);
		if (rank == 1)
			MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
	} else if (strcmp(mode, "wait") == 0) {
		MPI_Comm_group(MPI_COMM_WORLD, &world);
		int other = 1 - rank;
		MPI_Group_incl(world, 1, &other, &peer);
		if (rank == 0) {
			MPI_Win_post(peer, 0, win);
			MPI_Win_wait(win); // culprit: wait
		}
		MPI_Group_free(&peer);
		MPI_Group_free(&world);
	} else if (strcmp(mode, "lock-all") == 0) {
		if (rank == 1) {
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
			MPI_Win_lock_all(0, win); // culprit: lock-all
			MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
			MPI_Win_unlock_all(win);
			MPI_Win_unlock(0, win);
		}
	} else if (strcmp(mode, "lock-in-fence") == 0) {
		MPI_Win_fence(0, win);
		if (rank == 1) {
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win); // culprit: lock-in-fence
			MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
			MPI_Win_unlock(0, win);
		}
		MPI_Win_fence(0, win);
	} else {
		if (rank == 1)
			MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // culprit: put
		MPI_Win_fence(0, win);
		MPI_Win_fence(0, win);
	}
	MPI_Win_free(&win); // culprit: free
	if (rank == 0)
		printf("rma-sync: ok\n");
	MPI_Finalize();
	return 0;
}
