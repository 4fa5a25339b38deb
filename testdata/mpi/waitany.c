/* waitany (4 ranks): rank 0 posts one MPI_Irecv per worker (ranks 1..3,
 * named sources, tag 0) and handles the results in completion order with an
 * MPI_Waitany loop; each worker sends 4096 floats (16 KiB) of its own values.
 * The completion order varies, the matching does not (no AnySource).
 * Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define RANKS 4
#define N 4096

int main(int argc, char **argv)
{
	int rank, size, i, k, idx, done = 0;
	float *bufs[RANKS - 1], *buf;
	MPI_Request reqs[RANKS - 1];
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != RANKS) {
		if (rank == 0)
			fprintf(stderr, "waitany: needs %d ranks, got %d\n", RANKS, size);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		for (k = 0; k < RANKS - 1; k++) {
			bufs[k] = malloc(N * sizeof *bufs[k]);
			MPI_Irecv(bufs[k], N, MPI_FLOAT, k + 1, 0, MPI_COMM_WORLD, &reqs[k]); // culprit: irecv
		}
		for (k = 0; k < RANKS - 1; k++) {
			MPI_Waitany(RANKS - 1, reqs, &idx, &st); // culprit: waitany
			if (idx == MPI_UNDEFINED || st.MPI_SOURCE != idx + 1 || reqs[idx] != MPI_REQUEST_NULL) {
				fprintf(stderr, "waitany: rank 0: Waitany gave index %d source %d\n", idx, st.MPI_SOURCE);
				MPI_Finalize();
				return 1;
			}
			for (i = 0; i < N; i++) {
				if (bufs[idx][i] != (float)((idx + 1) * 100 + i % 50)) {
					fprintf(stderr, "waitany: rank 0: from rank %d element %d = %g\n", idx + 1, i, bufs[idx][i]);
					MPI_Finalize();
					return 1;
				}
			}
			done++;
		}
		for (k = 0; k < RANKS - 1; k++)
			free(bufs[k]);
		printf("waitany: ok, %d results\n", done);
	} else {
		buf = malloc(N * sizeof *buf);
		for (i = 0; i < N; i++)
			buf[i] = (float)(rank * 100 + i % 50);
		MPI_Send(buf, N, MPI_FLOAT, 0, 0, MPI_COMM_WORLD); // culprit: send
		free(buf);
	}
	MPI_Finalize();
	return 0;
}
