/* host-type-fixed (2 ranks): host-type with the datatypes that name the
 * variables' types: unsigned-int reduces the int as MPI_INT; float-int
 * sends the int[2] as MPI_INT, received as ints. Besides, what matches any
 * or either sign: a struct moved as MPI_BYTE, an unsigned char[] as
 * MPI_CHAR, a long as MPI_LONG_LONG (both 8-byte signed integers here), an
 * enum as MPI_INT. Correct: no findings. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum color { RED, GREEN };
struct pair { int a; double b; };

int main(int argc, char **argv)
{
	int rank, size;
	const char *mode = argc > 1 ? argv[1] : "unsigned-int";
	struct pair p = {1, 2.5}, q;
	unsigned char text[4] = "abc", got[4];
	long big = 1L << 40, bigs = 0;
	enum color c = GREEN, cs = RED;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "host-type-fixed: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (strcmp(mode, "unsigned-int") == 0) {
		int delta = rank == 0 ? -3 : 1, total = 0;
		MPI_Reduce(&delta, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); // culprit: reduce
	} else if (strcmp(mode, "float-int") == 0) {
		int vals[2] = {1, 2}, ints[2];
		if (rank == 0)
			MPI_Send(vals, 2, MPI_INT, 1, 0, MPI_COMM_WORLD); // culprit: send
		else
			MPI_Recv(ints, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		if (rank == 0)
			fprintf(stderr, "host-type-fixed: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	MPI_Sendrecv(&p, sizeof p, MPI_BYTE, 1 - rank, 1, &q, sizeof q, MPI_BYTE, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Sendrecv(text, 4, MPI_CHAR, 1 - rank, 2, got, 4, MPI_CHAR, 1 - rank, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Allreduce(&big, &bigs, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&c, &cs, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (q.b != 2.5 || got[1] != 'b' || bigs != 2 * big || cs != GREEN) {
		fprintf(stderr, "host-type-fixed: rank %d: wrong data\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0)
		printf("host-type-fixed: ok\n");
	MPI_Finalize();
	return 0;
}
