/* negative-count-fixed (2 ranks): the fix of negative-count: send: the loop stops at k < nchunks (three chunks: 4, 4 and 2 ints); gatherv: each rank's count is tile_count(rank), clamped at 0 too (3 ints from rank 0, none from rank 1). Correct: no findings. */
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
			fprintf(stderr, "negative-count-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (strcmp(mode, "send") == 0) {
		if (rank == 0) {
			for (i = 0; i < N; i++)
				buf[i] = 100 + i;
			for (k = 0; k < nchunks; k++) {
				count = N - k * CHUNK;
				if (count > CHUNK)
					count = CHUNK;
				MPI_Send(buf + k * CHUNK, count, MPI_INT, 1, k, MPI_COMM_WORLD); // culprit: send
			}
			printf("negative-count-fixed: ok\n");
		} else {
			for (k = 0; k < nchunks; k++) {
				count = N - k * CHUNK < CHUNK ? N - k * CHUNK : CHUNK;
				MPI_Recv(buf + k * CHUNK, count, MPI_INT, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
			}
			for (i = 0; i < N; i++) {
				if (buf[i] != 100 + i) {
					fprintf(stderr, "negative-count-fixed: element %d = %d, want %d\n", i, buf[i], 100 + i);
					MPI_Finalize();
					return 1;
				}
			}
		}
	} else if (strcmp(mode, "gatherv") == 0) {
		for (i = 0; i < TILE; i++)
			buf[i] = 100 + rank * TILE + i;
		mine = tile_count(rank);
		for (i = 0; i < 2; i++) {
			rcounts[i] = tile_count(i);
			displs[i] = i * TILE < GN ? i * TILE : GN;
		}
		MPI_Gatherv(buf, mine, MPI_INT, all, rcounts, displs, MPI_INT, 0, MPI_COMM_WORLD); // culprit: gatherv
		if (rank == 0) {
			for (i = 0; i < GN; i++) {
				if (all[i] != 100 + i) {
					fprintf(stderr, "negative-count-fixed: element %d = %d, want %d\n", i, all[i], 100 + i);
					MPI_Finalize();
					return 1;
				}
			}
			printf("negative-count-fixed: ok\n");
		}
	} else {
		if (rank == 0)
			fprintf(stderr, "negative-count-fixed: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	MPI_Finalize();
	return 0;
}
