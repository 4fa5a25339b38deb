/* negative-count (2 ranks): a negative count, an MPI error (MPI_ERR_COUNT: a count is a non-negative integer). send: rank 0 sends N = 10 ints to rank 1 in chunks of at most CHUNK = 4 with an off-by-one loop, for (k = 0; k <= nchunks; k++): the last MPI_Send's count, N - k * CHUNK, is -2 (after rank 1 received all three chunks and checked them). gatherv: each rank hands its tile of the GN = 3 ints to rank 0 with MPI_Gatherv; its count, GN - rank * TILE clamped at TILE = 4 from above only, is -1 on rank 1 (rank 0's receive counts, clamped at 0 too, are right: rank 0 waits in MPI_Gatherv). Under MPI_ERRORS_ARE_FATAL Open MPI aborts the job; mpirun exits 2 (the error class). scatter: rank 0's MPI_Scatter send count is -1, which Open MPI does not check: rank 0 dies of SIGSEGV in the call; p2ptrace names the invalid call, the crash its effect. Fix: negative-count-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 10
#define CHUNK 4
#define GN 3
#define TILE 4

/* tile_count is the size of rank r's tile of the GN ints, clamped both ways. */
static int tile_count(int r)
{
	int c = GN - r * TILE;
	return c < 0 ? 0 : c > TILE ? TILE : c;
}

int main(int argc, char **argv)
{
	int rank, size, k, i, count, mine;
	int buf[4 * CHUNK], all[GN], rcounts[2], displs[2];
	const char *mode = argc > 1 ? argv[1] : "send";
	int nchunks = (N + CHUNK - 1) / CHUNK;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "negative-count: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (strcmp(mode, "send") == 0) {
		if (rank == 0) {
			for (i = 0; i < N; i++)
				buf[i] = 100 + i;
			for (k = 0; k <= nchunks; k++) {
				count = N - k * CHUNK;
				if (count > CHUNK)
					count = CHUNK;
				MPI_Send(buf + k * CHUNK, count, MPI_INT, 1, k, MPI_COMM_WORLD); // culprit: send
			}
			printf("negative-count: ok\n");
		} else {
			for (k = 0; k < nchunks; k++) {
				count = N - k * CHUNK < CHUNK ? N - k * CHUNK : CHUNK;
				MPI_Recv(buf + k * CHUNK, count, MPI_INT, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
			}
			for (i = 0; i < N; i++) {
				if (buf[i] != 100 + i) {
					fprintf(stderr, "negative-count: element %d = %d, want %d\n", i, buf[i], 100 + i);
					MPI_Finalize();
					return 1;
				}
			}
		}
	} else if (strcmp(mode, "gatherv") == 0) {
		for (i = 0; i < TILE; i++)
			buf[i] = 100 + rank * TILE + i;
		mine = GN - rank * TILE;
		if (mine > TILE)
			mine = TILE;
		for (i = 0; i < 2; i++) {
			rcounts[i] = tile_count(i);
			displs[i] = i * TILE < GN ? i * TILE : GN;
		}
		MPI_Gatherv(buf, mine, MPI_INT, all, rcounts, displs, MPI_INT, 0, MPI_COMM_WORLD); // culprit: gatherv
		if (rank == 0) {
			for (i = 0; i < GN; i++) {
				if (all[i] != 100 + i) {
					fprintf(stderr, "negative-count: element %d = %d, want %d\n", i, all[i], 100 + i);
					MPI_Finalize();
					return 1;
				}
			}
			printf("negative-count: ok\n");
		}
	} else if (strcmp(mode, "scatter") == 0) {
		/* Rank 0 hands each rank its share of the GN ints less a tile
		 * of padding, GN - TILE: -1. Open MPI does not check a
		 * collective's count: the root copies its own share with a
		 * length of -4 bytes and dies of SIGSEGV. */
		int share = GN - TILE;
		for (i = 0; i < 4 * CHUNK; i++)
			buf[i] = i;
		MPI_Scatter(buf, share, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD); // culprit: scatter
	} else {
		if (rank == 0)
			fprintf(stderr, "negative-count: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	MPI_Finalize();
	return 0;
}
