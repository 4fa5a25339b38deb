/* coll-mismatch-fixed (2 ranks): coll-mismatch with both ranks calling MPI_Reduce (root 0), then MPI_Bcast (root 0) of 4 ints on both (rank 0 as 4 MPI_INT, rank 1 as one contiguous type of 4 MPI_INT: other handles, the same type signature), then MPI_Allreduce of 4 ints with MPI_SUM on both, and with a user-defined op (MPI_Op_create on each rank: each its own handle), then MPI_Allgather and MPI_Alltoall whose send and receive sides agree (one element of the contiguous type against 4 MPI_INT, and MPI_IN_PLACE); rank 0 checks the sums, both ranks the broadcast values and the allreduce results. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>

#define N 4

/* addints is a user-defined sum of ints. */
static void addints(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int i, *a = in, *b = inout;

	(void)dt;
	for (i = 0; i < *len; i++)
		b[i] += a[i];
}

int main(int argc, char **argv)
{
	int rank, size, i, a[N], b[N], c[N], d[N], all[2 * N], all2[2 * N];
	MPI_Datatype four;
	MPI_Op add;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "coll-mismatch-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Type_contiguous(N, MPI_INT, &four);
	MPI_Type_commit(&four);
	MPI_Op_create(addints, 1, &add);
	for (i = 0; i < N; i++)
		a[i] = rank + i;
	MPI_Reduce(a, b, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
	else
		MPI_Bcast(a, 1, four, 0, MPI_COMM_WORLD);
	for (i = 0; i < N; i++) {
		if (a[i] != i) {
			fprintf(stderr, "coll-mismatch-fixed: rank %d: broadcast element %d = %d, want %d\n", rank, i, a[i], i);
			MPI_Finalize();
			return 1;
		}
	}
	MPI_Allreduce(a, c, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(a, d, N, MPI_INT, add, MPI_COMM_WORLD);
	for (i = 0; i < N; i++) {
		if (c[i] != 2 * i || d[i] != 2 * i) {
			fprintf(stderr, "coll-mismatch-fixed: rank %d: allreduce element %d = %d and %d, want %d\n", rank, i, c[i], d[i], 2 * i);
			MPI_Finalize();
			return 1;
		}
	}
	/* Allgather and Alltoall: what each rank sends is what each receives
	 * from it, also as one element of four against 4 MPI_INT, and in place. */
	MPI_Allgather(a, 1, four, all, N, MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < 2 * N; i++)
		all[i] = rank * 2 * N + i;
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, N, MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < 2 * N; i++)
		all[i] = rank * 2 * N + i;
	MPI_Alltoall(all, N, MPI_INT, all2, 1, four, MPI_COMM_WORLD);
	for (i = 0; i < N; i++) {
		/* block j came from rank j: its all[rank * N + i] */
		if (all2[i] != rank * N + i || all2[N + i] != 2 * N + rank * N + i) {
			fprintf(stderr, "coll-mismatch-fixed: rank %d: alltoall element %d = %d and %d, want %d and %d\n", rank, i,
				all2[i], all2[N + i], rank * N + i, 2 * N + rank * N + i);
			MPI_Finalize();
			return 1;
		}
	}
	MPI_Op_free(&add);
	MPI_Type_free(&four);
	if (rank == 0) {
		for (i = 0; i < N; i++) {
			if (b[i] != 2 * i + 1) {
				fprintf(stderr, "coll-mismatch-fixed: element %d = %d, want %d\n", i, b[i], 2 * i + 1);
				MPI_Finalize();
				return 1;
			}
		}
		printf("coll-mismatch-fixed: ok\n");
	}
	MPI_Finalize();
	return 0;
}
