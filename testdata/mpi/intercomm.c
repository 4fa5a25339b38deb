/* intercomm (4 ranks): MPI_COMM_WORLD split by parity (color rank%2, key
 * rank) into {0,2} and {1,3}, joined by MPI_Intercomm_create (local leader
 * 0, remote leader world rank 1 or 0, tag 99). Across the intercommunicator
 * dest and source are ranks of the REMOTE group (MPI-3.1 sec. 6.6): local
 * rank l of the even half exchanges 16 ints with remote rank l (the even half
 * sends first, the odd half receives first), then each odd rank sends one int
 * that the even rank of the same local rank receives from MPI_ANY_SOURCE and
 * checks its status.MPI_SOURCE names the remote rank. Then an intercomm
 * barrier, and MPI_Intercomm_merge (even half low) with an MPI_Allreduce on
 * the merged communicator. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>

#define RANKS 4
#define N 16

static int fail(int rank, const char *what, int got, int want)
{
	fprintf(stderr, "intercomm: rank %d: %s = %d, want %d\n", rank, what, got, want);
	MPI_Finalize();
	return 1;
}

int main(int argc, char **argv)
{
	int rank, size, color, lrank, lsize, rsize, flag, i, v, sum, msg[N], got[N];
	MPI_Comm half, inter, merged;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != RANKS) {
		if (rank == 0)
			fprintf(stderr, "intercomm: needs %d ranks, got %d\n", RANKS, size);
		MPI_Finalize();
		return 2;
	}
	color = rank % 2;
	MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
	/* the remote leader is world rank 1 for the even half, 0 for the odd one */
	MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 99, &inter); // culprit: create
	MPI_Comm_test_inter(inter, &flag);
	MPI_Comm_rank(inter, &lrank);
	MPI_Comm_size(inter, &lsize);
	MPI_Comm_remote_size(inter, &rsize);
	if (!flag || lsize != 2 || rsize != 2 || lrank != rank / 2)
		return fail(rank, "intercomm rank", lrank, rank / 2);
	for (i = 0; i < N; i++)
		msg[i] = rank * 100 + i;
	/* remote rank lrank of the other half is world rank 2*lrank + (1-color) */
	if (color == 0) {
		MPI_Send(msg, N, MPI_INT, lrank, 0, inter); // culprit: send-even
		MPI_Recv(got, N, MPI_INT, lrank, 1, inter, MPI_STATUS_IGNORE); // culprit: recv-even
	} else {
		MPI_Recv(got, N, MPI_INT, lrank, 0, inter, MPI_STATUS_IGNORE); // culprit: recv-odd
		MPI_Send(msg, N, MPI_INT, lrank, 1, inter); // culprit: send-odd
	}
	for (i = 0; i < N; i++)
		if (got[i] != (2 * lrank + 1 - color) * 100 + i)
			return fail(rank, "element", got[i], (2 * lrank + 1 - color) * 100 + i);
	if (color == 1) {
		MPI_Send(&rank, 1, MPI_INT, lrank, 2, inter); // culprit: send-any
	} else {
		MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 2, inter, &st); // culprit: recv-any
		if (st.MPI_SOURCE != lrank || v != 2 * lrank + 1)
			return fail(rank, "MPI_SOURCE", st.MPI_SOURCE, lrank);
	}
	MPI_Barrier(inter);
	MPI_Intercomm_merge(inter, color, &merged);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged); // culprit: allreduce
	if (sum != 0 + 1 + 2 + 3)
		return fail(rank, "sum", sum, 6);
	if (rank == 0)
		printf("intercomm: ok\n");
	MPI_Comm_free(&merged);
	MPI_Comm_free(&inter);
	MPI_Comm_free(&half);
	MPI_Finalize();
	return 0;
}
