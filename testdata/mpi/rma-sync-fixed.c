/* rma-sync-fixed (2 ranks): rma-sync with each RMA call inside an access
 * epoch (MPI-3.1 sec. 11.5), every mode in one run (an argument runs one):
 * put between two MPI_Win_fence calls, lock and unlock around a Put, and
 * a post-start-complete-wait epoch from rank 1 to rank 0, and a lock epoch
 * between fences whose assertions end the fence epoch before it
 * (MPI_MODE_NOSUCCEED) and start none after it (MPI_MODE_NOPRECEDE) until
 * the next fence. lock-no-epoch: each rank locks its own window for local
 * stores between two fences with no RMA call between them, which start no
 * epoch (MPI-3.1 sec. 11.5.1: a fence starts one only if RMA calls follow
 * before the next; MPICH's atomic_get). Rank 0 checks the values it was
 * given. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int want(const char *mode, const char *m) { return mode == NULL || strcmp(mode, m) == 0; }

int main(int argc, char **argv)
{
	int rank, size, buf[4] = {0}, v, bad = 0, other;
	const char *mode = argc > 1 ? argv[1] : NULL;
	MPI_Win win;
	MPI_Group world, peer;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "rma-sync-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	v = rank + 1;
	MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	if (want(mode, "put")) {
		MPI_Win_fence(0, win);
		if (rank == 1)
			MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
		MPI_Win_fence(MPI_MODE_NOSUCCEED, win); /* (no fence epoch after it: the lock epochs below are not inside one) */
		bad |= rank == 0 && buf[0] != 2;
	}
	if (want(mode, "unlock")) {
		if (rank == 1) {
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
			MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
			MPI_Win_unlock(0, win);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win); // (the public copy made visible)
			bad |= buf[1] != 2;
			MPI_Win_unlock(0, win);
		}
	}
	if (want(mode, "wait")) {
		MPI_Comm_group(MPI_COMM_WORLD, &world);
		other = 1 - rank;
		MPI_Group_incl(world, 1, &other, &peer);
		if (rank == 0) {
			MPI_Win_post(peer, 0, win);
			MPI_Win_wait(win);
			bad |= buf[2] != 2;
		} else {
			MPI_Win_start(peer, 0, win);
			MPI_Put(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
			MPI_Win_complete(win);
		}
		MPI_Group_free(&peer);
		MPI_Group_free(&world);
	}
	if (want(mode, "lock-in-fence")) {
		MPI_Win_fence(0, win);
		MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
		if (rank == 1) {
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
			MPI_Put(&v, 1, MPI_INT, 0, 3, 1, MPI_INT, win);
			MPI_Win_unlock(0, win);
		}
		MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
		MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
		bad |= rank == 0 && buf[3] != 2;
	}
	if (want(mode, "lock-no-epoch")) {
		MPI_Win_fence(0, win);
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
		buf[1] = 7; /* a local store into the window, under its lock */
		MPI_Win_unlock(rank, win);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_fence(0, win);
		MPI_Win_fence(0, win);
		bad |= buf[1] != 7;
	}
	MPI_Win_free(&win);
	if (bad) {
		fprintf(stderr, "rma-sync-fixed: rank %d: wrong values %d %d %d %d\n", rank, buf[0], buf[1], buf[2], buf[3]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0)
		printf("rma-sync-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
